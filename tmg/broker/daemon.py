"""The broker process: memory servers and WARM tool servers kept warm, served over a private Unix socket.

Clients speak MCP's stdio framing (one JSON-RPC message a line). A client's `initialize` names
the server it wants (`params._meta["tmg/server"]`: command, args, env, dir) and the client's
code fingerprint; the broker answers `initialize` and `tools/list` from the child's cached
answers and forwards `tools/call` unchanged (only the id is renumbered). One child per distinct
spec: a changed ENV value is another child, never a stale one. Writes to one store go one at a
time. Two methods of its own: `tmg/status` and `tmg/stop`.

The broker exits after an idle period, when a client with other code asks for it (its code
changed), or on SIGTERM. A child that died is started again by the next client that needs it.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import fcntl
import json
import logging
import logging.handlers
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tmg.broker import handoff
from tmg.broker.cache import ReadCache
from tmg.broker.paths import CACHE_META, LOCK_NAME, PID_NAME, fingerprint, private_dir, socket_path
from tmg.mcp_servers.errlog import LOG_BYTES as _LOG_BYTES
from tmg.mcp_servers.errlog import rotate

PROTOCOL_VERSION = "2025-06-18"
STALE = -32098  # our code: the broker's code differs from the client's; it is stepping down
CHILD_FAILED = -32097  # the server could not be started, or died with the call in flight
_LINE_LIMIT = 64 * 1024 * 1024
_START_TIMEOUT_S = 30.0
# Tools known to only read; any other call to a store waits for the write before it (per store).
_READS = ("plur_inject", "plur_recall", "plur_status", "plur_timeline", "plur_list", "plur_search",
          "plur_session_start", "plur_profile", "plur_packs_list", "plur_stores_list")
_GATEWAY = "plur_admin"  # the lean profile's way to every other tool: {"action": tool, "args": {...}}
log = logging.getLogger("tmg.broker")


@dataclass(frozen=True)
class Spec:
    """A server to keep warm: what makes two clients share one child."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = field(repr=False)  # the declared ENV may hold tokens: never in a repr (logs)
    cwd: str | None
    # "memory": writes to one store go one at a time; "tools" (a WARM tool server): calls as they come.
    kind: str = "memory"
    name: str = field(default="", compare=False)
    errlog: str | None = field(default=None, compare=False)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Spec:
        return cls(command=str(data["command"]), args=tuple(str(a) for a in data.get("args", ())),
                   env=tuple(sorted((str(k), str(v)) for k, v in dict(data.get("env") or {}).items())),
                   cwd=data.get("cwd") or None, kind=str(data.get("kind") or "memory"),
                   name=str(data.get("name", "")), errlog=data.get("errlog"))

    def store(self) -> str:
        """Which store its writes go to (PLUR's: PLUR_PATH, else ~/.plur of its HOME)."""
        env = dict(self.env)
        return env.get("PLUR_PATH") or os.path.join(env.get("HOME", "~"), ".plur")


class ChildError(RuntimeError):
    """The child could not be reached, or answered with a JSON-RPC error (`error`, forwarded as is)."""

    def __init__(self, message: str, error: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.error = error


class Child:
    """One server process over stdio, initialized once, its tools listed once."""

    def __init__(self, spec: Spec, write_lock: asyncio.Lock | None,
                 on_write: Callable[[], None] = lambda: None, writer: Child | None = None) -> None:
        self.spec = spec
        self.write_lock = write_lock
        self.on_write = on_write  # told when a write to the store starts and when it ends
        # A second process of the same server that takes the writes (memory servers): PLUR's
        # writes are synchronous and rewrite a whole file (a second or more at a year of use),
        # and its one thread would hold every read behind them. Started at the first write.
        self.writer = writer
        self.proc: asyncio.subprocess.Process | None = None
        self.init_result: dict[str, Any] = {}
        self.tools: list[dict[str, Any]] = []
        self.read_only: frozenset[str] = frozenset()
        self.calls = 0
        self.starts = 0
        self.started_at = 0.0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and self._reader is not None \
            and not self._reader.done()

    @property
    def ready(self) -> bool:
        """Up and initialized (not just spawned)."""
        return self.alive and self._starting is None

    async def ensure(self) -> None:
        """Started and initialized: at once when it is up; (re)started when it is not."""
        if self.ready:
            return
        if self._starting is None:
            self._starting = asyncio.create_task(self._start())
        task = self._starting
        try:
            await asyncio.shield(task)
        finally:
            if task.done() and self._starting is task:
                self._starting = None

    def start_soon(self) -> None:
        """Start it in the background if it is not up (nobody waits; a failure is logged)."""
        if self.alive or self._starting is not None:
            return

        async def start() -> None:
            try:
                await self.ensure()
            except ChildError as exc:
                log.warning("server %s: the writer did not start: %s", self.spec.name, exc)

        self._warming = asyncio.create_task(start())

    async def _start(self) -> None:
        spec = self.spec
        errlog: Any = asyncio.subprocess.DEVNULL
        if spec.errlog:
            rotate(Path(spec.errlog))
            errlog = open(spec.errlog, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            self.proc = await asyncio.create_subprocess_exec(
                spec.command, *spec.args, env=dict(spec.env), cwd=spec.cwd, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=errlog, start_new_session=True, limit=_LINE_LIMIT)
        except OSError as exc:
            raise ChildError(f"cannot start {spec.command!r}: {exc}") from exc
        finally:
            if not isinstance(errlog, int):
                errlog.close()
        self.starts += 1
        self.started_at = time.time()
        log.info("server %s started (pid %s, start %d)", spec.name, self.proc.pid, self.starts)
        self._reader = asyncio.create_task(self._read(self.proc))
        try:
            async with asyncio.timeout(_START_TIMEOUT_S):
                self.init_result = await self.request("initialize", {
                    "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                    "clientInfo": {"name": "tmg-broker", "version": "0"}})
                self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                tools: list[dict[str, Any]] = []
                cursor = None
                while True:
                    listed = await self.request("tools/list", {"cursor": cursor} if cursor else {})
                    tools += listed.get("tools", [])
                    cursor = listed.get("nextCursor")
                    if not cursor:
                        break
        except (ChildError, TimeoutError) as exc:
            await self.stop()
            raise ChildError(f"{spec.name or spec.command}: {exc or 'timed out'}") from exc
        self.tools = tools
        self.read_only = frozenset(t["name"] for t in tools if (t.get("annotations") or {}).get("readOnlyHint"))

    def is_read(self, tool: str) -> bool:
        return tool in self.read_only or tool.startswith(_READS)

    def is_read_call(self, params: dict[str, Any]) -> bool:
        """A tools/call that only reads: by the tool's name, or through PLUR's `plur_admin`
        gateway (the lean profile) by the tool it names."""
        name = str(params.get("name", ""))
        arguments = params.get("arguments")
        if name == _GATEWAY and isinstance(arguments, dict):
            name = str(arguments.get("action", ""))
        return self.is_read(name)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its result; ChildError for an error answer or a dead child."""
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(ident, None)

    async def call(self, params: dict[str, Any]) -> dict[str, Any]:
        """A tools/call, forwarded unchanged; writes to one store one at a time."""
        self.calls += 1
        if self.write_lock is None or self.is_read_call(params):
            return await self.request("tools/call", params)
        async with self.write_lock:
            target = self.writer if self.writer is not None and self.writer.ready else self
            if target is self and self.writer is not None:
                self.writer.start_soon()  # this write goes through the reader; the next ones not
            self.on_write()
            try:
                return await target.request("tools/call", params)
            finally:
                self.on_write()

    def _send(self, message: dict[str, Any]) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise ChildError("the server is not running")
        try:
            proc.stdin.write((json.dumps(message) + "\n").encode())
        except (OSError, RuntimeError) as exc:
            raise ChildError(f"the server went away ({exc})") from exc

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        try:
            while line := await proc.stdout.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                if "method" in message:  # a request or notification from the server
                    if "id" in message:
                        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
                        if message["method"] == "ping":
                            answer["result"] = {}
                        else:
                            answer["error"] = {"code": -32601, "message": "not supported by tmg"}
                        with contextlib.suppress(ChildError):
                            self._send(answer)
                    continue
                future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
                if future is None or future.done():
                    continue
                if "error" in message:
                    error = message["error"] or {}
                    future.set_exception(ChildError(str(error.get("message", error)), error))
                else:
                    future.set_result(message.get("result") or {})
        except (OSError, ValueError) as exc:
            log.warning("server %s: reading failed: %s", self.spec.name, exc)
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ChildError("the server exited with the call in flight"))
            log.info("server %s: output closed (pid %s)", self.spec.name, proc.pid)

    async def stop(self) -> None:
        """Close stdin, a short grace, then the process group goes (PLUR's writes are synchronous)."""
        proc = self.proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                proc.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 0.3)
                break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left in its group
        if self._reader is not None:
            self._reader.cancel()


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
            child = self.children[spec] = Child(spec, lock, lambda: self.reads.written(store), writer)
        return child

    async def serve(self) -> None:
        private_dir(self.socket.parent)
        with contextlib.suppress(FileNotFoundError):
            self.socket.unlink()
        old = os.umask(0o177)
        try:
            server = await asyncio.start_unix_server(self._client, path=str(self.socket), limit=_LINE_LIMIT)
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
            children = [c for child in self.children.values() for c in (child, child.writer) if c is not None]
            await asyncio.gather(*(c.stop() for c in children), return_exceptions=True)
            log.info("broker %s exiting", os.getpid())

    async def _watch_idle(self) -> None:
        while True:
            await asyncio.sleep(min(self.idle / 4, 30.0))
            if self.clients == 0 and time.monotonic() - self.last_active > self.idle:
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
                if not isinstance(message, dict) or "method" not in message:
                    continue
                self.last_active = time.monotonic()
                session.start(message)
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass
        finally:
            session.gone()
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
        self._landed: collections.deque[Any] = collections.deque(maxlen=64)  # ids whose call landed

    def start(self, message: dict[str, Any]) -> None:
        task = asyncio.create_task(self.handle(message))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        ident = message.get("id")
        if ident is not None:
            self.in_flight[ident] = task
            task.add_done_callback(lambda _t: self.in_flight.pop(ident, None))

    def gone(self) -> None:
        """The client went away: its calls go too, except the writes it handed off."""
        kept = {self.in_flight.get(ident) for ident in self.handed}
        for task in self.tasks:
            if task not in kept:
                task.cancel()

    def send(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write((json.dumps(message) + "\n").encode())

    async def handle(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        try:
            result = await self._answer(str(message["method"]), message.get("params") or {})
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
            meta = dict(params.get("_meta") or {})
            cached = meta.pop(CACHE_META, False) is True
            params = {k: v for k, v in params.items() if k != "_meta"} | ({"_meta": meta} if meta else {})
            if cached and child.is_read_call(params):
                return await broker.reads.read((child.spec.store(), child.spec), params, lambda: child.call(params))
            return await child.call(params)
        if method == "ping":
            return {}
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
            elif ident in self._landed:  # it landed before the client asked: its file goes now
                handoff.remove(ahead)
                taken.append(ident)
        return taken

    async def _child(self) -> Child:
        if self.child is None:
            raise ChildError("initialize first")
        await self.child.ensure()  # a child that died is started again here
        return self.child


class StaleBroker(Exception):
    pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tmg.broker")
    parser.add_argument("--dir", required=True, help="the private runtime folder")
    parser.add_argument("--idle", type=float, default=900.0)
    parser.add_argument("--log", help="the broker's log file")
    args = parser.parse_args(argv)
    folder = private_dir(Path(args.dir))
    if args.log:
        Path(args.log).parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(args.log, maxBytes=_LOG_BYTES, backupCount=1)
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    # One broker per folder: a second one started in a race steps aside at once.
    lock = open(folder / LOCK_NAME, "a")  # noqa: SIM115 - held for the process's life
    deadline = time.monotonic() + 5.0
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            # Another broker holds it: a live one serves (we leave), a stale one is exiting (we wait).
            if _answers(socket_path(folder)) or time.monotonic() > deadline:
                return
            time.sleep(0.05)
    (folder / PID_NAME).write_text(str(os.getpid()))
    try:
        asyncio.run(Broker(folder, args.idle).serve())
    finally:
        with contextlib.suppress(OSError):
            if (folder / PID_NAME).read_text() == str(os.getpid()):
                (folder / PID_NAME).unlink()
    os._exit(0)


def _answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    else:
        probe.sendall(b'{"jsonrpc":"2.0","id":1,"method":"tmg/status"}\n')
        probe.settimeout(1.0)
        try:
            data = probe.recv(65536)
        except OSError:
            return False
        return b'"fingerprint"' in data and fingerprint().encode() in data
    finally:
        probe.close()
