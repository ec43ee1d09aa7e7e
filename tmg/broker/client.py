"""A small MCP client over the broker's socket: asyncio and json only, no mcp SDK.

The one-shot hot path talks to a warm broker with this, so it never pays the SDK's import
(most of a second of CPU). It speaks just what memory needs: initialize (naming the server),
tools/list, tools/call, and the broker's own tmg/status, tmg/stop and tmg/detach.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import struct
from pathlib import Path
from typing import Any

from tmg.broker.paths import fingerprint
from tmg.mcp.errors import McpCallError, McpCallTimeout
from tmg.mcp.outcome import ToolOutcome, ToolSpec
from tmg.mcp.result_content import tool_outcome
from tmg.mcp.spec import ServerSpec

STALE = -32098  # tmg.broker.daemon.STALE (not imported: the daemon module is the broker's, not ours)
_LINE_LIMIT = 64 * 1024 * 1024
_CALL_SLACK_S = 0.5


class NoBroker(OSError):
    """Nothing answers on the socket (none started, or it went away), or not one we can trust."""


class NotPrivate(NoBroker):
    """The socket's folder is open to other users: not used (what we send includes the server's ENV)."""


def _check_private(socket_file: Path) -> None:
    """The socket must sit in a folder only we can use (what we send includes the server's ENV)."""
    try:
        folder = socket_file.parent.stat()
    except OSError as exc:
        raise NoBroker(str(exc)) from exc
    if folder.st_uid != os.getuid() or folder.st_mode & 0o077:
        raise NotPrivate(f"{socket_file.parent} is not private to this user")


def _check_peer(sock: socket.socket) -> None:
    """The process serving the socket must be ours (SO_PEERCRED: pid, uid, gid)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    if struct.unpack("3i", creds)[1] != os.getuid():
        raise NoBroker("the process on the broker's socket belongs to another user")


class StaleBroker(RuntimeError):
    """The broker runs other code than ours; it is exiting and a new one must be started."""


class BrokerError(RuntimeError):
    """The broker answered with an error (the server could not start, or a call failed)."""


class BrokerConnection:
    """One client connection to the broker, bound to one server spec by its initialize."""

    def __init__(self, spec: ServerSpec, socket_file: Path, kind: str = "memory") -> None:
        self.spec = spec
        self.kind = kind
        self.socket_file = socket_file
        self._tools: dict[str, ToolSpec] = {}
        self.server_name: str | None = None
        self.server_version: str | None = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._pump: asyncio.Task[None] | None = None

    @property
    def tools(self) -> dict[str, ToolSpec]:
        """The tools the server listed (the broker's cached list), by name."""
        return dict(self._tools)

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(self._tools)

    @property
    def is_open(self) -> bool:
        return self._pump is not None and not self._pump.done()

    async def open(self) -> None:
        """Connect, initialize (the broker starts or reuses the server), list the tools.

        Raises:
            NoBroker: nothing listens on the socket.
            StaleBroker: the broker runs other code (it is exiting).
            BrokerError: the broker could not start the server.
        """
        _check_private(self.socket_file)
        try:
            self._reader, self._writer = await asyncio.open_unix_connection(str(self.socket_file),
                                                                            limit=_LINE_LIMIT)
        except OSError as exc:
            raise NoBroker(str(exc)) from exc
        try:
            _check_peer(self._writer.get_extra_info("socket"))
        except (NoBroker, OSError):
            self._writer.close()
            raise
        self._pump = asyncio.create_task(self._read(), name="broker-client")
        spec = self.spec
        wire = {"name": spec.name, "command": spec.command, "args": list(spec.args), "env": dict(spec.env),
                # A spec without DIR runs where tmg runs (as a direct spawn would), not in the
                # broker's own working folder (/): relative commands and PLUR's .plur.yaml lookup.
                "cwd": spec.cwd or os.getcwd(), "errlog": spec.errlog, "kind": self.kind}
        try:
            init = await self.request("initialize", {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "tmg", "version": "0"},
                "_meta": {"tmg/server": wire, "tmg/fingerprint": fingerprint()}})
            self._notify("notifications/initialized")
            listed = (await self.request("tools/list", {})).get("tools", [])
        except BaseException:
            await self.close()
            raise
        self._tools = {t["name"]: ToolSpec(t["name"], dict(t.get("inputSchema") or {}), t.get("description") or "",
                                           t.get("annotations")) for t in listed}
        info = init.get("serverInfo") or {}
        self.server_name, self.server_version = info.get("name"), info.get("version")

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0, *,
                        max_timeout: float | None = None, on_progress: Any = None) -> ToolOutcome:
        """tools/call, bounded by `timeout`; McpCallError when the call itself failed (broker gone,
        server died). The broker forwards no progress notifications, so `timeout` is the bound
        (`max_timeout` and `on_progress`, McpConnection's, have nothing to extend or report)."""
        try:
            result = await asyncio.wait_for(self.request("tools/call", {"name": name, "arguments": arguments}),
                                            timeout + _CALL_SLACK_S)
        except asyncio.TimeoutError as exc:
            raise McpCallTimeout(f"{self.spec.name}.{name}: timed out") from exc
        except (BrokerError, NoBroker) as exc:
            raise McpCallError(f"{self.spec.name}.{name}: {exc}") from exc
        return tool_outcome(result)

    async def detach(self, name: str, arguments: dict[str, Any], answer_file: Path, by: str,
                     env: dict[str, str] | None = None, timeout: float = 2.0) -> bool:
        """Have the broker run a tools/call after this client has gone, on a server of its own
        (this one's spec, `env` added), its answer written to `answer_file`; False when one such
        call is still running. Raises McpCallError."""
        try:
            ack = await asyncio.wait_for(self.request("tmg/detach", {
                "name": name, "arguments": arguments, "answer_file": str(answer_file), "by": by,
                "env": dict(env or {})}), timeout)
        except asyncio.TimeoutError as exc:
            raise McpCallTimeout(f"{self.spec.name}: the broker did not take the call") from exc
        except (BrokerError, NoBroker) as exc:
            raise McpCallError(f"{self.spec.name}: {exc}") from exc
        return bool(ack.get("started"))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        if self._writer is None or not self.is_open:
            raise NoBroker("the broker connection is closed")
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            self._writer.write((json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                            "params": params}) + "\n").encode())
            return await future
        finally:
            self._pending.pop(ident, None)

    def _notify(self, method: str) -> None:
        if self._writer is not None:
            self._writer.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())

    async def _read(self) -> None:
        assert self._reader is not None
        try:
            while line := await self._reader.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                future = self._pending.get(message.get("id")) if isinstance(message, dict) else None
                if future is None or future.done():
                    continue
                if "error" in message:
                    error = message["error"] or {}
                    exc: Exception = (StaleBroker if error.get("code") == STALE else BrokerError)(
                        str(error.get("message", error)))
                    future.set_exception(exc)
                else:
                    future.set_result(message.get("result") or {})
        except (OSError, ValueError):
            pass
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(NoBroker("the broker went away"))

    async def start(self) -> None:
        await self.open()

    async def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 0.5)
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(BaseException):
                await self._pump


def ask(socket_file: Path, method: str, timeout: float = 2.0) -> dict[str, Any]:
    """One request to the broker, blocking (`tmg memory status|stop`, doctor).

    Raises:
        NoBroker: nothing answers on the socket.
        BrokerError: it answered with an error.
    """
    _check_private(socket_file)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        try:
            sock.connect(str(socket_file))
        except OSError as exc:
            raise NoBroker(str(exc)) from exc
        _check_peer(sock)
        sock.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": method}) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            try:
                chunk = sock.recv(65536)
            except OSError as exc:
                raise NoBroker(str(exc)) from exc
            if not chunk:
                raise NoBroker("the broker closed the connection")
            data += chunk
    finally:
        sock.close()
    message = json.loads(data)
    if "error" in message:
        raise BrokerError(str(message["error"].get("message")))
    return message["result"]
