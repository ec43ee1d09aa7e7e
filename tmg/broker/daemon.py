"""The broker process: memory servers and WARM tool servers kept warm, served over a private Unix socket.

Clients speak MCP's stdio framing (one JSON-RPC message a line). A client's `initialize` names
the server it wants (`params._meta["tmg/server"]`: command, args, env, dir) and the client's
code fingerprint; the broker answers `initialize` and `tools/list` from the child's cached
answers and forwards `tools/call`, resources and prompts unchanged (only the id is renumbered);
what the server says or asks meanwhile reaches the client it is for (relay.py). One child per distinct
spec: a changed ENV value is another child, never a stale one. Writes to one store go one at a
time. Methods of its own: `tmg/status`, `tmg/stop`, `tmg/handoff` (a client's last writes, landed after it has
gone) and `tmg/detach`: a tools/call run after the
client has gone (a session's end asks for the memory sync so: the user never waits for git), on a
server process of its own (the client's spec, with the ENV it adds): PLUR runs git synchronously,
and the warm server must not freeze for every other client meanwhile. Its answer is written to a
file the client names; one at a time per store and tool.

The broker exits after an idle period (never while a detached call runs), when a client with
other code reaches it (its files are named by its code's fingerprint, so that is rare: two tmg
versions each get a broker), or on SIGTERM. A call fails at the bound its client sent with it, or
when the client cancels it. A child that died is started again by the next client that needs it.
"""

from __future__ import annotations

import asyncio
import collections
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
from tmg.broker import handoff
from tmg.broker.cache import ReadCache
from tmg.broker.calls import after_writes
from tmg.broker.child import LINE_LIMIT, Child, ChildError, Spec, write_bounded
from tmg.broker.paths import CACHE_META, DEADLINE_META, TIMED_OUT, fingerprint, private_dir, socket_path
from tmg.broker.reinforce import Reinforcement, reader_launch
from tmg.broker.relay import FORWARDED

STALE = -32098  # our code: the broker's code differs from the client's; it is stepping down
HANDED_WRITE_S = 30.0  # the bound of a write the broker finishes for a client that left (else spooled)
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
        self.reads = ReadCache()
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
                         "tools": len(c.tools),
                         "writer_pid": c.writer.proc.pid if c.writer and c.writer.alive and c.writer.proc else None}
                        for c in self.children.values()],
        }

    def child_for(self, spec: Spec) -> Child:
        child = self.children.get(spec)
        if child is None:
            store = spec.store()
            lock = self.write_locks.setdefault(store, asyncio.Lock()) if spec.kind == "memory" else None
            writer = Child(spec, None) if lock is not None else None
            launch = reader_launch(spec) if writer is not None else None
            child = self.children[spec] = Child(spec, lock, lambda: self.reads.written(store), writer, launch)
            if launch is not None:
                child.reinforcement = Reinforcement(child.replay, child.warm)
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
        await after_writes(self.write_locks.get(child.spec.store()), HANDED_WRITE_S)  # a session's, left to us
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
            await self.reads.aclose()
            await asyncio.gather(*(c.reinforcement.aclose(5.0) for c in self.children.values()
                                   if c.reinforcement is not None), return_exceptions=True)
            for task in self.detached.values():
                task.cancel()  # its own finally stops its server
            children = [c for child in self.children.values() for c in (child, child.writer) if c is not None]
            await asyncio.gather(*self.detached.values(), *(c.stop() for c in children), return_exceptions=True)
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
        try:
            while line := await reader.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    session.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
                    continue
                if isinstance(message, dict) and "method" not in message:
                    session.answered(message)  # a client's answer to its server's request (relay.py)
                    continue
                if not isinstance(message, dict):
                    continue
                self.last_active = time.monotonic()
                session.start(message)
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            session.gone()  # its calls go too, but for the writes it handed off
            session.leave()  # and its server's requests are no longer put to it
            self.clients -= 1
            self.last_active = time.monotonic()
            writer.close()


class ClientSession:
    """One connected client: bound to one child by its initialize."""

    def __init__(self, broker: Broker, writer: asyncio.StreamWriter) -> None:
        self.broker = broker
        self.writer = writer
        self.child: Child | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.in_flight: dict[Any, asyncio.Task[None]] = {}  # by request id
        self.handed: dict[Any, Path] = {}  # request id -> its write-ahead file (tmg/handoff)
        self.bounds: dict[Any, asyncio.Timeout] = {}  # request id -> its call's deadline
        self._landed: collections.deque[Any] = collections.deque(maxlen=64)  # ids whose call landed

    def start(self, message: dict[str, Any]) -> None:
        if message.get("method") == "notifications/cancelled":
            self.cancel((message.get("params") or {}).get("requestId"))
            return
        task = asyncio.create_task(self.handle(message))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        ident = message.get("id")
        if ident is not None:
            self.in_flight[ident] = task
            task.add_done_callback(lambda _t: self.in_flight.pop(ident, None))

    def cancel(self, ident: Any) -> None:
        """The client gave up on a call: it fails here, its server is told (Child.request), and a
        write it held the store's lock for frees it. A write handed off to the broker stays."""
        task = self.in_flight.get(ident)
        if task is not None and ident not in self.handed:
            task.cancel()

    def gone(self) -> None:
        """The client went away: its calls go too, except the writes it handed off."""
        kept = {self.in_flight.get(ident) for ident in self.handed}
        for task in self.tasks:
            if task not in kept:
                task.cancel()

    def send(self, message: dict[str, Any]) -> None:
        if self.writer.is_closing():
            return
        if not write_bounded(self.writer, (json.dumps(message) + "\n").encode()):
            log.warning("a client reads nothing of its answers: it is disconnected")
            self.writer.transport.abort()  # its reader then ends, and its calls go with it

    @property
    def open(self) -> bool:
        return not self.writer.is_closing()

    def answered(self, message: dict[str, Any]) -> None:
        """An answer from the client: to a request its server put to it through the relay."""
        if self.child is not None:
            self.child.relay.answered(message)

    def leave(self) -> None:
        if self.child is not None:
            self.child.relay.leave(self)

    async def handle(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        try:
            result = await self._answer(str(message["method"]), message.get("params") or {}, ident)
            if message.get("method") == "tools/call" and handoff.landed(result):
                self._landed.append(ident)
                ahead = self.handed.pop(ident, None)
                if ahead is not None:
                    handoff.remove(ahead)
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

    async def _forward(self, ident: Any, child: Child, params: dict[str, Any], deadline: float | None,
                       cached: bool | str) -> Any:
        """One tools/call within its client's bound (`deadline` seconds, the wait for the store's
        write lock included); ChildError with code TIMED_OUT when it passed. A write handed off
        to the broker gets longer (`_take`): its client left, but it must not hold the store forever."""
        try:
            async with asyncio.timeout(deadline) as bound:
                self.bounds[ident] = bound
                if cached:  # by tool and arguments (not `_meta`: a progress token is per call), and view
                    key = {"name": params.get("name"), "arguments": params.get("arguments")}
                    key |= {"tmg/view": cached} if isinstance(cached, str) else {}
                    return await self.broker.reads.read((child.spec.store(), child.spec), key,
                                                        lambda: child.call(params))
                return await child.call(params)
        except TimeoutError:
            child.timeouts += 1
            message = f"{child.spec.name or 'the server'}: no answer within the client's {deadline:g} s"
            raise ChildError(message, {"code": TIMED_OUT, "message": message}) from None
        finally:
            self.bounds.pop(ident, None)

    async def _answer(self, method: str, params: dict[str, Any], ident: Any = None) -> Any:
        broker = self.broker
        if method == "initialize":
            meta = params.get("_meta") or {}
            if meta.get("tmg/fingerprint") != broker.fingerprint:
                raise StaleBroker
            child = broker.child_for(Spec.from_wire(meta["tmg/server"]))
            child.relay.join(self)  # before its start: a server may ask its client things while starting
            self.child = child
            await child.ensure()
            return child.init_result
        if method == "tools/list":
            child = await self._child()
            await child.relay.tools_listed()  # the list its server last said changed
            return {"tools": child.tools}
        if method == "tools/call":
            child = await self._child()
            broker.calls += 1
            meta = dict(params.get("_meta") or {})
            cached = meta.pop(CACHE_META, False)  # True, or the view of the store the read depends on
            view = cached if isinstance(cached, str) else None
            deadline = _deadline(meta.pop(DEADLINE_META, None))
            params = {k: v for k, v in params.items() if k != "_meta"} | ({"_meta": meta} if meta else {})
            cacheable = (cached is True or view is not None) and child.is_read_call(params)
            with child.relay.calling(self, params):  # the server's requests meanwhile are put to this client
                return await self._forward(ident, child, params, deadline, view if cacheable and view else cacheable)
        if method in FORWARDED:  # resources, prompts: passed on as they are
            child = await self._child()
            with child.relay.calling(self, params):
                return await child.request(method, params)
        if method == "ping":
            return {}
        if method == "tmg/detach":
            if self.child is None:
                raise ChildError("initialize first")
            return broker.detach(self.child, params)
        if method == "tmg/handoff":
            return {"taken": self._take(params.get("calls") or [])}
        if method == "tmg/status":
            return broker.status()
        if method == "tmg/stop":
            asyncio.get_running_loop().call_later(0.05, broker.done.set)
            return {"pid": os.getpid()}
        if method.startswith("notifications/"):
            return None
        raise ChildError(f"method not supported by the broker: {method}")

    def _take(self, calls: list[Any]) -> list[Any]:
        """The calls the broker finishes for a client that is leaving (`tmg/handoff`)."""
        taken = []
        for call in calls:
            ident = call.get("id") if isinstance(call, dict) else None
            ahead = handoff.valid_ahead(call.get("ahead")) if isinstance(call, dict) else None
            if ahead is None:
                continue
            if ident in self.in_flight:
                self.handed[ident] = ahead
                taken.append(ident)
                bound = self.bounds.get(ident)
                if bound is not None and bound.when() is not None:
                    bound.reschedule(max(bound.when(), asyncio.get_running_loop().time() + HANDED_WRITE_S))
            elif ident in self._landed:  # it landed before the client asked: its file goes now
                handoff.remove(ahead)
                taken.append(ident)
        return taken

    async def _child(self) -> Child:
        if self.child is None:
            raise ChildError("initialize first")
        await self.child.ensure()  # a child that died is started again here
        return self.child


def _deadline(value: Any) -> float | None:
    """The client's bound of a call, from its `_meta` (none from an older client: unbounded)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


class StaleBroker(Exception):
    pass
