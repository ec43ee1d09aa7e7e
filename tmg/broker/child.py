"""One server the broker keeps warm: a stdio child process, initialized once, its tools listed once
(again when it says they changed), restarted by the next client that needs it after it died; what
its server says to its clients goes through its relay (relay.py). Writes to one memory store go one
at a time, through a second process of the same server (its writer), so that calls known to only
read never wait behind them. PLUR's read process runs through a script whose reads do not write,
and their reinforcement is replayed on the writer when the store is idle (reinforce.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tmg import __version__
from tmg.broker.calls import READS, lists_pinned, tool_name, trace
from tmg.broker.paths import child_umask
from tmg.broker.relay import Relay, capabilities
from tmg.mcp.errlog import rotate

PROTOCOL_VERSION = "2025-06-18"
LINE_LIMIT = 64 * 1024 * 1024
_START_TIMEOUT_S = 30.0
REPLAY_BOUND_S = 30.0  # a replayed read holds the store's write lock at most this long
_UNANSWERED_RESTART = 3  # calls abandoned in a row with no answer from the process: it is hung, restart it
# What may wait unread for one peer (a server's stdin, a client's socket): past it the peer reads
# nothing and is taken for hung, not buffered for without end (the broker's memory is everyone's).
BUFFER_LIMIT = 16 * 1024 * 1024
log = logging.getLogger("tmg.broker")


class Reinforcing(Protocol):
    """What a read process's child tells about its store's use (reinforce.Reinforcement)."""

    def note(self, params: dict[str, Any]) -> bool: ...

    def touch(self) -> None: ...

    async def aclose(self, bound: float) -> None: ...


@dataclass(frozen=True)
class Spec:
    """A server to keep warm: what makes two clients share one child."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = field(repr=False)  # the declared ENV may hold tokens: never in a repr (logs)
    cwd: str | None
    # "memory": writes to one store go one at a time; "tools" (a WARM tool server): calls as they come.
    kind: str = "memory"
    sampling: bool = False  # SAMPLING: the server is told its clients answer sampling requests
    name: str = field(default="", compare=False)
    errlog: str | None = field(default=None, compare=False)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Spec:
        return cls(command=str(data["command"]), args=tuple(str(a) for a in data.get("args", ())),
                   env=tuple(sorted((str(k), str(v)) for k, v in dict(data.get("env") or {}).items())),
                   cwd=data.get("cwd") or None, kind=str(data.get("kind") or "memory"),
                   sampling=data.get("sampling") is True,
                   name=str(data.get("name", "")), errlog=data.get("errlog"))

    def store(self) -> str:
        """Which store its writes go to (PLUR's: PLUR_PATH, else ~/.plur of its HOME)."""
        env = dict(self.env)
        return env.get("PLUR_PATH") or os.path.join(env.get("HOME", "~"), ".plur")


def write_bounded(writer: asyncio.StreamWriter, data: bytes) -> bool:
    """Write `data` without waiting; False when the peer had left more than BUFFER_LIMIT unread
    (measured before: one large message to a peer that reads is not a hang)."""
    backlog = writer.transport.get_write_buffer_size()
    writer.write(data)
    return backlog <= BUFFER_LIMIT


class ChildError(RuntimeError):
    """The child could not be reached, or answered with a JSON-RPC error (`error`, forwarded as is)."""

    def __init__(self, message: str, error: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.error = error


class Child:
    """One server process over stdio, initialized once, its tools listed once."""

    def __init__(self, spec: Spec, write_lock: asyncio.Lock | None,
                 on_write: Callable[[], None] = lambda: None, writer: Child | None = None,
                 launch: Spec | None = None) -> None:
        """`launch`: how to start it when that differs from `spec` (PLUR's read process, whose
        reads do not write: reinforce.py); its writes then always go to `writer`, and its
        `reinforcement` (set by the broker) replays the reads there when the store is idle."""
        self.spec = spec
        self.launch = launch or spec
        self.write_lock = write_lock
        self.on_write = on_write  # told when a write to the store starts and when it ends
        # A second process of the same server that takes the writes (memory servers): PLUR's
        # writes are synchronous and rewrite a whole file (a second or more at a year of use),
        # and its one thread would hold every read behind them. Started at the first write.
        self.writer = writer
        self.reinforcement: Reinforcing | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self.init_result: dict[str, Any] = {}
        self.tools: list[dict[str, Any]] = []
        self.read_only: frozenset[str] = frozenset()
        self.calls = 0
        self.starts = 0
        self.timeouts = 0  # calls given up on at their client's bound (status)
        self._unanswered = 0  # calls abandoned since the process last answered anything
        self.started_at = 0.0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None
        self._last_read: dict[str, Any] | None = None  # its last inject or recall (to warm it after a write)
        self._last_list: dict[str, Any] | None = None  # the last pinned list (to warm the writer after one)
        self._heating: asyncio.Task[None] | None = None
        self._restarting: asyncio.Task[None] | None = None
        self.relay = Relay(self._send, self.list_tools)  # what its server says to its clients, and back

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and self._reader is not None \
            and not self._reader.done() and self._restarting is None

    @property
    def ready(self) -> bool:
        """Up and initialized (not just spawned)."""
        return self.alive and self._starting is None

    async def ensure(self) -> None:
        """Started and initialized: at once when it is up; (re)started when it is not."""
        if self._restarting is not None:
            await asyncio.shield(self._restarting)  # a hung process is going: wait until it went
            self._restarting = None
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
        spec = self.launch
        errlog: Any = asyncio.subprocess.DEVNULL
        if spec.errlog:
            rotate(Path(spec.errlog))
            errlog = open(spec.errlog, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            self.proc = await asyncio.create_subprocess_exec(
                spec.command, *spec.args, env=dict(spec.env), cwd=spec.cwd, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=errlog, start_new_session=True, limit=LINE_LIMIT,
                umask=child_umask(spec.kind))
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
                    "protocolVersion": PROTOCOL_VERSION, "capabilities": capabilities(spec.kind, spec.sampling),
                    "clientInfo": {"name": "tmg", "version": __version__}})
                self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                await self.list_tools()
        except (ChildError, TimeoutError) as exc:
            await self.stop()
            raise ChildError(f"{spec.name or spec.command}: {exc or 'timed out'}") from exc
        if self.reinforcement is not None and self.writer is not None:
            self.writer.start_soon()  # a read process takes no write: its writer is up before the first

    async def list_tools(self) -> None:
        """tools/list, every page: the list clients are answered with (again when it changed)."""
        tools: list[dict[str, Any]] = []
        cursor = None
        while True:
            listed = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools += listed.get("tools", [])
            cursor = listed.get("nextCursor")
            if not cursor:
                break
        self.tools = tools
        self.read_only = frozenset(t["name"] for t in tools if (t.get("annotations") or {}).get("readOnlyHint"))

    def is_read(self, tool: str) -> bool:
        return tool in self.read_only or tool.startswith(READS)

    def is_read_call(self, params: dict[str, Any]) -> bool:
        """A tools/call that only reads: by the tool's name, or through PLUR's `plur_admin`
        gateway (the lean profile) by the tool it names."""
        # `plur_pin {list: true}` only reads, but not what the read process sees (calls.py).
        return self.is_read(tool_name(params))

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its result; ChildError for an error answer or a dead child.
        Abandoned (cancelled, or its deadline passed): the server is told (`notifications/cancelled`),
        and a process that answered none of the last few abandoned calls is restarted (hung)."""
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
            return await future
        except asyncio.CancelledError:
            self._abandoned(ident)
            raise
        finally:
            self._pending.pop(ident, None)

    def _abandoned(self, ident: int) -> None:
        with contextlib.suppress(ChildError):
            self._send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": ident, "reason": "the client's deadline passed or it cancelled"}})
        self._unanswered += 1
        if self._unanswered >= _UNANSWERED_RESTART and self.proc is not None:
            log.warning("server %s: no answer to %d calls in a row: restarting it", self.spec.name, self._unanswered)
            self._unanswered = 0
            self._restarting = asyncio.create_task(self.stop())  # the next call starts it again

    async def call(self, params: dict[str, Any]) -> dict[str, Any]:
        """A tools/call, forwarded unchanged; writes to one store one at a time, through the
        writer process once it is up (this one takes them until then, unless it is PLUR's read
        process: a write then waits for the writer). The pinned list goes the writer's way too,
        but it is no write (calls.py). Cancelled (its deadline, the client's
        notifications/cancelled), it frees the store's write lock."""
        self.calls += 1
        began = time.monotonic()
        if self.write_lock is None or self.is_read_call(params):
            if self.reinforcement is not None and self.reinforcement.note(params):
                self._last_read = params  # a read of the store's cached parse, to warm it after a write
            try:
                return await self.request("tools/call", params)
            finally:
                trace(self.spec.name, "read", params, began, began)
        listing = lists_pinned(params)
        async with self.write_lock:
            locked = time.monotonic()
            if self.reinforcement is not None and self.writer is not None:
                await self.writer.ensure()
                target = self.writer
            else:
                target = self.writer if self.writer is not None and self.writer.ready else self
                if target is self and self.writer is not None:
                    self.writer.start_soon()
            if listing:
                self._last_list = params
            else:
                self.on_write()
            try:
                return await target.request("tools/call", params)
            finally:
                trace(self.spec.name, "list" if listing else "write", params, began, locked)
                if self.reinforcement is not None:
                    self.reinforcement.touch()
                if not listing:
                    self.on_write()
                    if self.reinforcement is not None:
                        self.warm()

    async def replay(self, calls: list[dict[str, Any]]) -> None:
        """Reads the read process served, run again on the writer (PLUR reinforces there); what
        they change is activation, not what any read shows, so the read cache stays."""
        assert self.writer is not None and self.write_lock is not None
        for params in calls:
            async with self.write_lock:  # one call at a time: a write of tmg's waits for one replay, not all
                await self.writer.ensure()
                began = time.monotonic()
                with contextlib.suppress(ChildError, TimeoutError):
                    async with asyncio.timeout(REPLAY_BOUND_S):  # a hung writer never holds the lock
                        await self.writer.request("tools/call", params)
                log.info("server %s: a read replayed in %.0f ms", self.spec.name, (time.monotonic() - began) * 1000)

    def warm(self) -> None:
        """The store's file changed: PLUR's processes parse it now, not on the next prompt, side by
        side: the read process by its last inject or recall (not kept for replay), the writer by
        the pinned list (its own write dropped its parse), after the write that holds the lock."""
        read, listing, writer = self._last_read, self._last_list, self.writer

        async def warm(process: Child, params: dict[str, Any], lock: asyncio.Lock | None, what: str) -> None:
            async with lock if lock is not None else contextlib.nullcontext():
                began = time.monotonic()
                if process.ready:
                    with contextlib.suppress(ChildError):
                        await process.request("tools/call", params)
                log.info("server %s: %s warmed in %.0f ms", self.spec.name, what, (time.monotonic() - began) * 1000)

        warming = [warm(self, read, None, "read process")] if read is not None else []
        if listing is not None and writer is not None:
            warming.append(warm(writer, listing, self.write_lock, "writer"))
        if warming:
            self._heating = asyncio.ensure_future(asyncio.gather(*warming))

    def _send(self, message: dict[str, Any]) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise ChildError("the server is not running")
        try:
            unread = write_bounded(proc.stdin, (json.dumps(message) + "\n").encode())
        except (OSError, RuntimeError) as exc:
            raise ChildError(f"the server went away ({exc})") from exc
        if not unread:
            log.warning("server %s: it reads nothing of what it is sent: restarting it", self.spec.name)
            if self._restarting is None:
                self._restarting = asyncio.create_task(self.stop())
            raise ChildError("the server reads nothing of what it is sent (hung)")

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
                if "method" in message:  # a request or notification from the server: for its clients
                    with contextlib.suppress(ChildError):
                        self.relay.from_server(message)
                    continue
                self._unanswered = 0
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
