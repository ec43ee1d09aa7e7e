"""The process's MCP servers, tool servers and memory servers alike: each started once, in the
background, shared by the sessions that follow (the REPL's /new and /mode), waited for with a
bound, withdrawn when its transport fails, and closed quickly when the process is done.

`PooledServer` is one server's life (starting, ready, failed, withdrawn, closed); what "ready"
means (a memory server must offer recall) and how a failure is worded belong to its kind
(`tmg.mcp.tool_server.McpToolServer`, `tmg.memory.runtime.MemoryRuntime`). `ServerPool` holds a
process's servers of one kind, keyed by their spec.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, Literal, Protocol, TypeVar

from tmg.mcp.spec import ServerSpec

# reconnecting: a URL tool server whose connection dropped, being started afresh (tool_server.py)
State = Literal["off", "starting", "ready", "reconnecting", "failed", "withdrawn", "closed"]
# The most close() lets a start it cancelled wind down (only a start that ignores the cancel takes it).
START_CANCEL_WAIT_S = 2.0


class Startable(Protocol):
    async def start(self) -> None: ...

    async def close(self) -> None: ...


class PooledServer:
    """One server started once in the background: its state, a bounded wait, withdrawal, close.

    A kind overrides `_ready(conn)` (checks after the connection is up; raise to refuse it) and
    `_failure(exc)` (the one line a failed start costs).
    """

    def __init__(self, spec: ServerSpec | None, *, start_timeout: float,
                 connect: Callable[[ServerSpec, float], Any], warn: Callable[[str], None]) -> None:
        self.spec = spec
        self.name = spec.name if spec is not None else "-"
        self.state: State = "off" if spec is None else "starting"
        self.failure: str | None = None
        self.start_timeout = start_timeout
        self.started_at: float | None = None  # monotonic, when the start began
        self.start_seconds: float | None = None  # how long the start took (measured)
        self._connect = connect
        self._warn = warn
        self._conn: Any = None
        self._task: asyncio.Task[None] | None = None

    def set_warn(self, warn: Callable[[str], None]) -> None:
        self._warn = warn

    @property
    def route(self) -> str | None:
        """How it was reached ("warm broker", a cold start...), when its connection says."""
        return getattr(self._conn, "route", None)

    def start(self) -> None:
        """Start connecting in the background (call on the event loop). Idempotent."""
        if self.spec is None or self._task is not None or self.state != "starting":
            return
        self.started_at = time.monotonic()
        self._task = asyncio.get_running_loop().create_task(self._start(self.spec), name=f"mcp-start:{self.name}")

    async def _start(self, spec: ServerSpec) -> None:
        conn = self._conn = self._connect(spec, self.start_timeout)
        try:
            await conn.start()
            await self._ready(conn)
        except Exception as exc:  # noqa: BLE001 - whatever broke, the chat goes on without it
            self._fail(self._failure(exc))
            return
        if self.state == "starting":
            self.start_seconds = time.monotonic() - (self.started_at or time.monotonic())
            self.state = "ready"
            self._on_ready()

    async def _ready(self, conn: Any) -> None:
        """Checks on a started connection; raise to refuse it (it is closed by the raiser)."""

    def _on_ready(self) -> None:
        """Told once when the server became ready."""

    def _failure(self, exc: Exception) -> str:
        return f"MCP server {self.name} did not start ({exc})"

    def _fail(self, message: str) -> None:
        self.state = "failed"
        self.failure = message
        self._warn(message)

    @property
    def starting(self) -> bool:
        return self.state == "starting"

    def waited(self) -> float:
        """Seconds since the start began (0 before it)."""
        return 0.0 if self.started_at is None else time.monotonic() - self.started_at

    async def wait(self, bound: float) -> bool:
        """Wait at most `bound` seconds for the start to finish; True when the server is ready.
        A caller cancelled while waiting is cancelled; the start goes on."""
        task = self._task
        if task is not None and not task.done() and bound > 0:
            await asyncio.wait({task}, timeout=bound)
        return self.state == "ready"

    def withdraw(self, reason: str) -> bool:
        """A ready server whose transport failed is withdrawn (True); once."""
        if self.state != "ready":
            return False
        self.state = "withdrawn"
        self.failure = reason
        return True

    async def close(self) -> None:
        """Stop the server without waiting for it to exit by itself. A connection that never
        became ready is cancelled by its close, child and all: a server hung in its start costs
        the exit nothing (memory.md §6, quality.md §2)."""
        self.state = "closed"
        task = self._task
        starting = task is not None and not task.done()
        if starting and task is not None:
            task.cancel()
        if self._conn is not None:
            try:
                await self._conn.close()
            except Exception as exc:  # noqa: BLE001 - closing must not raise
                self._closing_failed(exc)
        if starting and task is not None:
            await asyncio.wait({task}, timeout=START_CANCEL_WAIT_S)
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: closing must not raise

    def _closing_failed(self, exc: Exception) -> None:
        """A close that raised (nothing to do by default: the process is done with it)."""


S = TypeVar("S", bound=PooledServer)


class ServerPool(Generic[S]):
    """A process's servers of one kind: one per spec, reused while it is not closed."""

    def __init__(self) -> None:
        self._servers: list[S] = []

    def __iter__(self) -> Iterator[S]:
        return iter(list(self._servers))

    def get(self, spec: ServerSpec, make: Callable[[], S],
            reuse: tuple[State, ...] = ("starting", "ready", "reconnecting", "failed", "withdrawn")) -> S:
        """The server of `spec` in one of the `reuse` states, else a new one made by `make`."""
        for server in self._servers:
            if server.spec == spec and server.state in reuse:
                return server
        server = make()
        self._servers.append(server)
        return server

    def start(self) -> None:
        """Start every server not started yet, in parallel (call on the event loop)."""
        for server in self._servers:
            server.start()

    async def aclose(self) -> None:
        """Stop every server without waiting for it to exit by itself."""
        servers, self._servers = self._servers, []
        await asyncio.gather(*(s.close() for s in servers))
