"""`MemoryRuntime`: the memory server's connection for one session, from start to a quick close.

The server is started in the background as soon as the session opens (PLUR takes 0.4 to 0.9 s
to initialize), so the first prompt rarely waits for it. Whoever needs a client asks with a
bound: the injector asks with a short one and skips recall for that turn if the server is not
ready yet; writes run detached and may wait for the whole start. A server that fails to start
costs one warning and turns memory off for the session; the chat goes on (memory.md §2).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol

from tmg.config.model import Config
from tmg.mcp_servers.outcome import McpStartError
from tmg.mcp_servers.spec import ServerSpec, spec_from_config
from tmg.memory.client import DEFAULT_TIMEOUT_S, CallResult, PlurClient, ToolCaller

State = Literal["off", "starting", "ready", "failed", "closed"]
# Tools tmg cannot do without: recall for the injector. Writes are checked per call.
_NEEDED = ("plur_inject_hybrid",)
# The most close() lets a start it cancelled wind down (only a start that ignores the cancel takes it).
START_CANCEL_WAIT_S = 2.0


class ClientSource(Protocol):
    """Where the seams get their PlurClient: None when memory has no live server (yet)."""

    @property
    def starting(self) -> bool:
        """True while the server is still starting (slow, not failed)."""
        ...

    async def client(self, wait: float) -> PlurClient | None: ...


class StartableCaller(ToolCaller, Protocol):
    async def start(self) -> None: ...

    async def close(self) -> None: ...


class ReadyClient:
    """A ClientSource over a client that is already connected (tests, embedding)."""

    starting = False

    def __init__(self, client: PlurClient | None) -> None:
        self._client = client

    async def client(self, wait: float) -> PlurClient | None:
        return self._client


def memory_server_spec(config: Config, errlog: Path | None = None) -> ServerSpec | None:
    """The ServerSpec of MEMORY.SERVER, or None when memory is off or the entry is missing."""
    memory = config.memory
    entry = config.mcp_servers.get(memory.server)
    if not memory.enabled or entry is None:
        return None
    return spec_from_config(entry, errlog)


def _connect(spec: ServerSpec, start_timeout: float) -> StartableCaller:
    # Through the warm broker (memory.md §9), or spawned directly when it is off or unreachable.
    from tmg.broker.launch import connect

    return connect(spec, start_timeout)


class MemoryRuntime:
    """Owns the memory server's connection; hands out one PlurClient once it is up."""

    def __init__(
        self,
        spec: ServerSpec | None,
        *,
        on_result: Callable[[CallResult[Any]], None] | None = None,
        call_timeout: float = DEFAULT_TIMEOUT_S,
        start_timeout: float = 15.0,
        warn: Callable[[str], None] = lambda _m: None,
        debug: Callable[[str], None] = lambda _m: None,
        connect: Callable[[ServerSpec, float], StartableCaller] = _connect,
    ) -> None:
        """Args:
            spec: the memory server, or None when memory is off at session start.
            on_result: told about every memory call (the session's WriteReport.record).
            call_timeout: bound of each memory call.
            start_timeout: bound of spawn + initialize + tools/list.
            warn: the one user-visible line when the server cannot be used.
            connect: builds the connection (tests pass fakeplur in-process or a failing one).
        """
        self.spec = spec
        self._on_result = on_result
        self._call_timeout = call_timeout
        self._start_timeout = start_timeout
        self._warn = warn
        self._debug = debug
        self._connect = connect
        self._conn: StartableCaller | None = None
        self._client: PlurClient | None = None
        self._task: asyncio.Task[None] | None = None
        self.state: State = "off" if spec is None else "starting"
        self.failure: str | None = None
        self.transport: str | None = None  # how it was reached: warm broker, or which cold start

    @property
    def start_timeout(self) -> float:
        return self._start_timeout

    @property
    def call_timeout(self) -> float:
        return self._call_timeout

    def start(self) -> None:
        """Start connecting in the background (call on the session's event loop). Idempotent."""
        if self.spec is None or self._task is not None:
            return
        self._task = asyncio.get_running_loop().create_task(self._start(self.spec), name="memory-start")

    async def _start(self, spec: ServerSpec) -> None:
        conn = self._connect(spec, self._start_timeout)
        self._conn = conn
        try:
            await conn.start()
        except (McpStartError, OSError) as exc:
            self._fail(f"memory server {spec.name!r} did not start ({exc}); memory is off for this session")
            return
        except Exception as exc:  # noqa: BLE001 - whatever broke, the chat goes on without memory
            self._fail(f"memory server {spec.name!r} did not start ({type(exc).__name__}: {exc}); "
                       "memory is off for this session")
            return
        client = PlurClient(conn, timeout=self._call_timeout, on_result=self._on_result)
        missing = [tool for tool in _NEEDED if not client.surface.can_call(tool)]
        if missing:
            await conn.close()
            self._fail(f"memory server {spec.name!r} offers neither {', '.join(missing)} nor plur_admin "
                       "(is it PLUR?); memory is off for this session")
            return
        self._client = client
        self.state = "ready"
        route = "directly" if client.surface.is_direct("plur_inject_hybrid") else "through plur_admin"
        self.transport = getattr(conn, "route", None)
        via = f", via {self.transport}" if self.transport else ""
        self._debug(f"memory server {spec.name!r} ready ({len(conn.tool_names)} tools, recall {route}{via})")

    def _fail(self, message: str) -> None:
        self.state = "failed"
        self.failure = message
        self._warn(message)

    def for_session(self, on_result: Callable[[CallResult[Any]], None] | None) -> ClientSource:
        """A ClientSource over this (shared) server whose calls are counted by `on_result`:
        each session keeps its own write report while the process keeps one server."""
        return SessionClients(self, on_result)

    @property
    def starting(self) -> bool:
        return self.state == "starting"

    async def ready(self, wait: float) -> StartableCaller | None:
        """The started connection, waiting at most `wait` seconds; None if not usable."""
        return self._conn if await self.client(wait) is not None else None

    async def client(self, wait: float) -> PlurClient | None:
        """The client, waiting at most `wait` seconds for the start to finish; None if not usable."""
        task = self._task
        if self._client is None and task is not None and not task.done() and wait > 0:
            try:
                await asyncio.wait_for(asyncio.shield(task), wait)
            except asyncio.TimeoutError:
                return None
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # our caller is being cancelled, not the start
                return None  # the start was cancelled by close()
        return self._client

    def describe(self) -> str:
        """One line for `/memory`."""
        name = self.spec.name if self.spec else "-"
        if self.state == "ready" and self._client is not None:
            gateway = "" if self._client.surface.is_direct("plur_inject_hybrid") else ", tools through plur_admin"
            via = f" · via {self.transport}" if self.transport else ""
            return f"server {name}: ready{gateway}{via}"
        if self.state == "failed":
            return f"server {name}: failed — {self.failure}"
        if self.state == "off":
            return "server: none (memory was off when the session started)"
        return f"server {name}: {self.state}"

    async def close(self) -> None:
        """Stop the server without waiting for it to exit by itself (the connection is quick)."""
        self.state = "closed"
        self._client = None
        task = self._task
        starting = task is not None and not task.done()
        if starting:
            task.cancel()
        if self._conn is not None:
            # A connection that never became ready is cancelled by its close, child and all: a
            # server hung in its start costs the exit nothing (memory.md §6, quality.md §2).
            try:
                await self._conn.close()
            except Exception as exc:  # noqa: BLE001
                self._debug(f"closing the memory server: {exc}")
        if starting and task is not None:
            # Bounded: only a start that ignores its cancellation could take this long.
            await asyncio.wait({task}, timeout=START_CANCEL_WAIT_S)
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: closing must not raise


class SessionClients:
    """One session's view of a shared MemoryRuntime: its own PlurClient, counted by its own report."""

    def __init__(self, runtime: MemoryRuntime, on_result: Callable[[CallResult[Any]], None] | None) -> None:
        self._runtime = runtime
        self._on_result = on_result
        self._client: PlurClient | None = None
        self._over: StartableCaller | None = None

    @property
    def starting(self) -> bool:
        return self._runtime.starting

    async def client(self, wait: float) -> PlurClient | None:
        conn = await self._runtime.ready(wait)
        if conn is None:
            return None
        if self._client is None or self._over is not conn:
            self._client = PlurClient(conn, timeout=self._runtime.call_timeout, on_result=self._on_result)
            self._over = conn
        return self._client


class MemoryServers:
    """The process's memory servers: each started once, shared by the sessions that follow (the
    REPL's /new and /mode), and closed when the process is done with them."""

    def __init__(
        self,
        *,
        warn: Callable[[str], None] = lambda _m: None,
        debug: Callable[[str], None] = lambda _m: None,
        connect: Callable[[ServerSpec, float], StartableCaller] = _connect,
    ) -> None:
        self._warn = warn
        self._debug = debug
        self._connect = connect
        self._runtimes: list[MemoryRuntime] = []

    def runtime_for(self, config: Config, errlog: Path | None = None) -> MemoryRuntime:
        """The runtime of `config`'s memory server: the running one when the spec is the same."""
        spec = memory_server_spec(config, errlog)
        if spec is None:
            return MemoryRuntime(None)
        for runtime in self._runtimes:
            if runtime.spec == spec and runtime.state in ("starting", "ready", "failed"):
                return runtime
        entry = config.mcp_servers[config.memory.server]
        runtime = MemoryRuntime(spec, start_timeout=entry.timeout, warn=self._warn, debug=self._debug,
                                connect=self._connect)
        self._runtimes.append(runtime)
        return runtime

    async def aclose(self) -> None:
        """Stop every server without waiting for it to exit by itself."""
        runtimes, self._runtimes = self._runtimes, []
        await asyncio.gather(*(r.close() for r in runtimes))
