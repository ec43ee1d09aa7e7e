"""A small MCP client over the broker's socket: asyncio and json only, no mcp SDK.

The one-shot hot path talks to a warm broker with this, so it never pays the SDK's import
(most of a second of CPU). It speaks initialize (naming the server), tools/list, tools/call, the
broker's own tmg/status, tmg/stop and tmg/detach, and for a WARM tool server what a direct
connection does besides: its resources and prompts (client_content.py), and its own requests and
notifications as the broker passes them on (client_traffic.py).
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

from tmg import __version__
from tmg.broker.client_content import ServerContent
from tmg.broker.client_traffic import ServerTraffic
from tmg.broker.paths import CACHE_META, DEADLINE_META, TIMED_OUT, fingerprint
from tmg.mcp.call_clock import CallClock
from tmg.mcp.errors import McpCallError, McpCallFailed, McpCallTimeout
from tmg.mcp.outcome import ToolOutcome, ToolSpec
from tmg.mcp.result_content import tool_outcome
from tmg.mcp.spec import ServerSpec

STALE = -32098  # tmg.broker.daemon.STALE (not imported: the daemon module is the broker's, not ours)
# The broker's own failures (the server could not start or died, an internal error): not the
# server's answer. Any other error code is the server's, passed on as it answered.
_BROKER_FAILURES = (None, -32097, -32603)
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
    """The broker answered with an error (the server could not start, or a call failed); `code`:
    the JSON-RPC error's, when the server's own answer was passed on."""

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.data = code, data


class BrokerTimeout(BrokerError):
    """The broker gave up on the call at the bound the client sent with it."""


class BrokerConnection(ServerTraffic, ServerContent):
    """One client connection to the broker, bound to one server spec by its initialize."""

    def __init__(self, spec: ServerSpec, socket_file: Path, kind: str = "memory", start_timeout: float = 30.0) -> None:
        self.spec = spec
        self.kind = kind
        self.socket_file = socket_file
        self.start_timeout = start_timeout  # the bound of a listing, a prompt
        self._tools: dict[str, ToolSpec] = {}
        self.server_name: str | None = None
        self.server_version: str | None = None
        self.instructions = ""  # what the server says about using it (initialize's `instructions`)
        self._init_traffic()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._calls: dict[int, tuple[str, dict[str, Any]]] = {}  # tools/calls awaiting an answer: (name, arguments)
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
                "cwd": spec.cwd or os.getcwd(), "errlog": spec.errlog, "kind": self.kind,
                "sampling": spec.sampling}
        try:
            init = await self.request("initialize", {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "tmg", "version": __version__},
                "_meta": {"tmg/server": wire, "tmg/fingerprint": fingerprint()}})
            self._notify("notifications/initialized")
            listed = (await self.request("tools/list", {})).get("tools", [])
        except BaseException:
            await self.close()
            raise
        self._tools = _tool_specs(listed)
        info = init.get("serverInfo") or {}
        self.server_name, self.server_version = info.get("name"), info.get("version")
        self.instructions = str(init.get("instructions") or "")

    async def refresh_tools(self) -> None:
        """List the tools again (the broker lists them afresh when the server says they changed)."""
        self.tools_changed = False
        listed = await self._asked("tools/list", {}, self.start_timeout, "tools/list: ")
        self._tools = _tool_specs(listed.get("tools", []))

    caches_reads = True  # a call marked `cached` may be answered from the broker's cache

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0, *,
                        max_timeout: float | None = None, on_progress: Any = None,
                        cached: bool | str = False) -> ToolOutcome:
        """tools/call, bounded as a direct call is (tmg.mcp.call_clock): `timeout` seconds of
        silence, each progress notification the broker passes on buying another, within
        `max_timeout`, no clock while the server waits for the user. McpCallError when the call
        itself failed (broker gone, server died).
        `cached`: a read the broker may answer from its cache of the same call (it refreshes it
        off the path, and forgets it when anything writes to the server's store); a string names
        the view of the store the read depends on (a team store's state): another view, another entry."""
        clock = CallClock(timeout + _CALL_SLACK_S, (max_timeout or timeout) + _CALL_SLACK_S,
                          lambda: self._asking, lambda: self._answered_at)

        def progressed(progress: float, total: float | None, message: str | None) -> None:
            clock.progressed()
            if on_progress is not None:
                on_progress(progress, total, message)

        token = self.progress_token(progressed)
        meta: dict[str, Any] = {"progressToken": token} | ({CACHE_META: cached} if cached else {})
        if self.kind == "memory":
            # The bound goes with a memory call: the broker gives up on it then too (and tells the
            # server), so that a hung call does not hold the store's writes behind it. (A tool
            # server's call may wait for the user: its client's clock decides, and cancels.)
            meta[DEADLINE_META] = max_timeout or timeout
        call = asyncio.ensure_future(self.request("tools/call", {"name": name, "arguments": arguments,
                                                                  "_meta": meta}))
        try:
            if not await clock.wait(call):
                call.cancel()
                raise McpCallTimeout(f"{self.spec.name}.{name}: timed out", at_limit=clock.at_limit)
            result = call.result()
        except asyncio.CancelledError:
            call.cancel()
            raise
        except BrokerTimeout as exc:
            raise McpCallTimeout(f"{self.spec.name}.{name}: timed out", at_limit=True) from exc
        except BrokerError as exc:
            if exc.code in _BROKER_FAILURES:
                raise McpCallError(f"{self.spec.name}.{name}: {exc}") from exc
            # The server's JSON-RPC error answer: this call failed, the server stands (as direct).
            reason = f"{exc} (JSON-RPC error {exc.code})"
            raise McpCallFailed(f"{self.spec.name}.{name}: {reason}", reason=reason, code=exc.code,
                                data=exc.data) from exc
        except NoBroker as exc:
            raise McpCallError(f"{self.spec.name}.{name}: {exc}") from exc
        finally:
            self.ended(token)
        return tool_outcome(result)

    async def _asked(self, method: str, params: dict[str, Any], timeout: float, label: str) -> Any:
        try:
            return await asyncio.wait_for(self.request(method, params), timeout)
        except asyncio.TimeoutError as exc:
            raise McpCallError(f"{label}no answer within {timeout:g} s") from exc
        except BrokerError as exc:  # the server's error answer, passed on: the connection stands
            reason = f"{exc} (JSON-RPC error {exc.code})" if exc.code is not None else str(exc)
            raise McpCallFailed(f"{label}{reason}", reason=reason) from exc
        except NoBroker as exc:
            raise McpCallError(f"{label}{exc}") from exc

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
        if method == "tools/call":
            self._calls[ident] = (str(params.get("name", "")), dict(params.get("arguments") or {}))
        try:
            self._writer.write((json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                            "params": params}) + "\n").encode())
            return await future
        except asyncio.CancelledError:
            if future.cancelled() or not future.done():  # given up on (its bound, or the caller's): so does the broker
                self._notify("notifications/cancelled", {"requestId": ident, "reason": "cancelled by tmg"})
            raise
        finally:
            self._pending.pop(ident, None)
            self._calls.pop(ident, None)

    def in_flight(self) -> list[tuple[int, str, dict[str, Any]]]:
        """The tools/calls sent and not answered yet: (request id, tool name, arguments)."""
        return [(ident, name, args) for ident, (name, args) in self._calls.items()]

    async def hand_off(self, ahead: dict[int, str], timeout: float = 0.5) -> set[int]:
        """Leave in-flight calls to the broker as this client goes: it finishes each one and
        removes its write-ahead file (`ahead`: request id -> path) once it landed. The ids it took."""
        if not ahead:
            return set()
        calls = [{"id": ident, "ahead": path} for ident, path in ahead.items()]
        try:
            result = await asyncio.wait_for(self.request("tmg/handoff", {"calls": calls}), timeout)
        except (asyncio.TimeoutError, BrokerError, NoBroker, StaleBroker):
            return set()  # an older broker, or none: the client waits for its writes as before
        return {i for i in result.get("taken", []) if isinstance(i, int)}

    def _notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send_line({"jsonrpc": "2.0", "method": method} | ({"params": params} if params else {}))

    def _send_line(self, message: dict[str, Any]) -> None:
        if self._writer is not None and not self._writer.is_closing():
            self._writer.write((json.dumps(message) + "\n").encode())

    async def _read(self) -> None:
        assert self._reader is not None
        try:
            while line := await self._reader.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and "method" in message:  # the server's, passed on
                    self.traffic_from_server(message)
                    continue
                future = self._pending.get(message.get("id")) if isinstance(message, dict) else None
                if future is None or future.done():
                    continue
                if "error" in message:
                    error = message["error"] or {}
                    code = error.get("code") if isinstance(error.get("code"), int) else None
                    text = str(error.get("message", error))
                    exc: Exception = StaleBroker(text) if code == STALE else \
                        (BrokerTimeout if code == TIMED_OUT else BrokerError)(text, code, error.get("data"))
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


def _tool_specs(listed: list[dict[str, Any]]) -> dict[str, ToolSpec]:
    return {t["name"]: ToolSpec(t["name"], dict(t.get("inputSchema") or {}), t.get("description") or "",
                                t.get("annotations")) for t in listed if isinstance(t, dict) and "name" in t}


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
