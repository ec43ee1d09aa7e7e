"""The broker process: memory servers and WARM tool servers kept warm, served over a private Unix socket.

Clients speak MCP's stdio framing (one JSON-RPC message a line). A client's `initialize` names
the server it wants (`params._meta["tmg/server"]`: command, args, env, dir) and the client's
code fingerprint; the broker answers `initialize` and `tools/list` from the child's cached
answers and forwards `tools/call` unchanged (only the id is renumbered). One child per distinct
spec: a changed ENV value is another child, never a stale one. Writes to one store go one at a
time. Methods of its own: `tmg/status`, `tmg/stop`, and `tmg/detach`: a tools/call run after the
client has gone (a session's end asks for the memory sync so: the user never waits for git), on a
server process of its own (the client's spec, with the ENV it adds): PLUR runs git synchronously,
and the warm server must not freeze for every other client meanwhile. Its answer is written to a
file the client names; one at a time per store and tool.

The broker exits after an idle period (never while a detached call runs), when a client with
other code asks for it (its code changed), or on SIGTERM. A child that died is started again by
the next client that needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import struct
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tmg.atomic_file import replace_file
from tmg.broker.child import LINE_LIMIT, Child, ChildError, Spec
from tmg.broker.paths import fingerprint, private_dir, socket_path

STALE = -32098  # our code: the broker's code differs from the client's; it is stepping down
CHILD_FAILED = -32097  # the server could not be started, or died with the call in flight
log = logging.getLogger("tmg.broker")


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end (Linux SO_PEERCRED: pid, uid, gid)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


class Broker:
    def __init__(self, folder: Path, idle: float) -> None:
        self.folder = folder
        self.idle = idle
        self.socket = socket_path(folder)
        self.fingerprint = fingerprint()
        self.children: dict[Spec, Child] = {}
        self.write_locks: dict[str, asyncio.Lock] = {}
        self.detached: dict[tuple[str, str], asyncio.Task[None]] = {}  # (store, tool) -> its call
        self.clients = 0
        self.calls = 0
        self.refused = 0
        self.started = time.time()
        self.last_active = time.monotonic()
        self.done = asyncio.Event()

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(), "started": self.started, "uptime": time.time() - self.started,
            "fingerprint": self.fingerprint, "socket": str(self.socket), "clients": self.clients,
            "calls": self.calls, "refused": self.refused, "idle_exit": self.idle,
            "detached": sorted(tool for (_store, tool), task in self.detached.items() if not task.done()),
            "servers": [{"name": c.spec.name, "command": c.spec.command, "kind": c.spec.kind, "cwd": c.spec.cwd,
                         "pid": c.proc.pid if c.proc else None,
                         "alive": c.alive, "calls": c.calls, "starts": c.starts, "store": c.spec.store(),
                         "tools": len(c.tools)} for c in self.children.values()],
        }

    def child_for(self, spec: Spec) -> Child:
        child = self.children.get(spec)
        if child is None:
            lock = self.write_locks.setdefault(spec.store(), asyncio.Lock()) if spec.kind == "memory" else None
            child = self.children[spec] = Child(spec, lock)
        return child

    def detach(self, like: Child, params: dict[str, Any]) -> dict[str, Any]:
        """Start `params["name"]` with no client waiting, on a new server of `like`'s spec plus
        `params["env"]`; its answer goes to `params["answer_file"]` as {at, by, is_error, text}.
        At most one per store and tool."""
        tool, answer_file = str(params["name"]), Path(str(params["answer_file"]))
        key = (like.spec.store(), tool)
        running = self.detached.get(key)
        if running is not None and not running.done():
            return {"started": False, "running": True}
        env = dict(like.spec.env) | {str(k): str(v) for k, v in dict(params.get("env") or {}).items()}
        child = Child(replace(like.spec, env=tuple(sorted(env.items()))), None)
        self.detached[key] = asyncio.create_task(
            self._detached(child, tool, dict(params.get("arguments") or {}), answer_file, str(params.get("by", ""))))
        return {"started": True}

    async def _detached(self, child: Child, tool: str, arguments: dict[str, Any], answer_file: Path, by: str) -> None:
        try:
            await child.ensure()
            result = await child.call({"name": tool, "arguments": arguments})
            is_error = bool(result.get("isError"))
            text = "".join(str(c.get("text", "")) for c in result.get("content") or () if c.get("type") == "text")
        except ChildError as exc:
            is_error, text = True, json.dumps({"error": str(exc)})
        finally:
            await child.stop()
        self.last_active = time.monotonic()
        answer = {"at": time.time(), "by": by, "is_error": is_error, "text": text}
        try:
            replace_file(answer_file, (json.dumps(answer, indent=1) + "\n").encode(), private_folder=True)
        except OSError as exc:
            log.warning("detached %s: its answer could not be written to %s (%s)", tool, answer_file, exc)
        log.info("detached %s on %s: %s", tool, child.spec.store(), "failed" if is_error else "done")

    async def serve(self) -> None:
        private_dir(self.socket.parent)
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(self._client, path=str(self.socket), limit=LINE_LIMIT)
        finally:
            os.umask(old)
        os.chmod(self.socket, 0o600)
        log.info("broker %s serving on %s (idle exit after %gs)", os.getpid(), self.socket, self.idle)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, self.done.set)
        watch = asyncio.create_task(self._watch_idle())
        try:
            await self.done.wait()
        finally:
            watch.cancel()
            server.close()
            with contextlib.suppress(FileNotFoundError):
                if self.socket.exists():
                    self.socket.unlink()
            for task in self.detached.values():
                task.cancel()  # its own finally stops its server
            await asyncio.gather(*self.detached.values(), *(c.stop() for c in self.children.values()),
                                 return_exceptions=True)
            log.info("broker %s exiting", os.getpid())

    async def _watch_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.idle / 4, 30.0))
            busy = any(not task.done() for task in self.detached.values())
            if self.clients == 0 and not busy and time.monotonic() - self.last_active > self.idle:
                log.info("idle for %gs: exiting", self.idle)
                self.done.set()
                return

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        try:
            uid = peer_uid(sock)
        except OSError:
            uid = -1
        if uid != os.getuid():
            self.refused += 1
            log.warning("refused a connection from uid %s", uid)
            writer.close()
            return
        self.clients += 1
        self.last_active = time.monotonic()
        session = ClientSession(self, writer)
        tasks: set[asyncio.Task[None]] = set()
        try:
            while line := await reader.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    session.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
                    continue
                if not isinstance(message, dict) or "method" not in message:
                    continue
                self.last_active = time.monotonic()
                task = asyncio.create_task(session.handle(message))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            for task in tasks:
                task.cancel()
            self.clients -= 1
            self.last_active = time.monotonic()
            writer.close()


class ClientSession:
    """One connected client: bound to one child by its initialize."""

    def __init__(self, broker: Broker, writer: asyncio.StreamWriter) -> None:
        self.broker = broker
        self.writer = writer
        self.child: Child | None = None

    def send(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write((json.dumps(message) + "\n").encode())

    async def handle(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        try:
            result = await self._answer(str(message["method"]), message.get("params") or {})
        except ChildError as exc:
            error = exc.error or {"code": CHILD_FAILED, "message": str(exc)}
        except StaleBroker:
            error = {"code": STALE, "message": "the broker's code changed; it is exiting"}
            self.broker.done.set()
        except Exception as exc:  # noqa: BLE001 - one bad request must not end the broker
            log.exception("request %s failed", message.get("method"))
            error = {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}
        else:
            if ident is not None:
                self.send({"jsonrpc": "2.0", "id": ident, "result": result})
            return
        if ident is not None:
            self.send({"jsonrpc": "2.0", "id": ident, "error": error})

    async def _answer(self, method: str, params: dict[str, Any]) -> Any:
        broker = self.broker
        if method == "initialize":
            meta = params.get("_meta") or {}
            if meta.get("tmg/fingerprint") != broker.fingerprint:
                raise StaleBroker
            child = broker.child_for(Spec.from_wire(meta["tmg/server"]))
            await child.ensure()
            self.child = child
            return child.init_result
        if method == "tools/list":
            return {"tools": (await self._child()).tools}
        if method == "tools/call":
            child = await self._child()
            broker.calls += 1
            return await child.call(params)
        if method == "ping":
            return {}
        if method == "tmg/detach":
            if self.child is None:
                raise ChildError("initialize first")
            return broker.detach(self.child, params)
        if method == "tmg/status":
            return broker.status()
        if method == "tmg/stop":
            asyncio.get_running_loop().call_later(0.05, broker.done.set)
            return {"pid": os.getpid()}
        if method.startswith("notifications/"):
            return None
        raise ChildError(f"method not supported by the broker: {method}")

    async def _child(self) -> Child:
        if self.child is None:
            raise ChildError("initialize first")
        await self.child.ensure()  # a child that died is started again here
        return self.child


class StaleBroker(Exception):
    pass
