"""`MemoryRuntime`: the memory server's connection for one session, from start to a quick close.

The server is started in the background as soon as the session opens (PLUR takes 0.4 to 0.9 s
to initialize), so the first prompt rarely waits for it. Whoever needs a client asks with a
bound: the injector asks with a short one and skips recall for that turn if the server is not
ready yet; writes run detached and may wait for the whole start. A server that fails to start
costs one warning and turns memory off for the session; the chat goes on (memory.md §2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from tmg.config.model import Config
from tmg.mcp.errors import McpStartError
from tmg.mcp.pool import PooledServer, ServerPool
from tmg.mcp.spec import ServerSpec, spec_from_config
from tmg.memory.client import DEFAULT_TIMEOUT_S, CallResult, PlurClient, ToolCaller
from tmg.private_files import PRIVATE_UMASK, tighten

# Tools tmg cannot do without: recall for the injector. Writes are checked per call.
_NEEDED = ("plur_inject_hybrid",)


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
    """The ServerSpec of MEMORY.SERVER, or None when memory is off or the entry is missing.
    Its store is private: the server is started with a umask of 077 (the broker's children
    get the same, tmg.broker.child)."""
    memory = config.memory
    entry = config.mcp_servers.get(memory.server)
    if not memory.enabled or entry is None:
        return None
    return replace(spec_from_config(entry, errlog), umask=PRIVATE_UMASK)


def plur_store_path(env: Mapping[str, str]) -> Path:
    """Where PLUR keeps its store for a server started with `env`: PLUR_PATH, else ~/.plur."""
    if env.get("PLUR_PATH"):
        return Path(env["PLUR_PATH"]).expanduser()
    return (Path(env["HOME"]) if env.get("HOME") else Path.home()) / ".plur"


def _connect(spec: ServerSpec, start_timeout: float) -> StartableCaller:
    # A store an older start left open to others is closed first (once: then it is 0700).
    tighten(plur_store_path(spec.env))
    # Through the warm broker (memory.md §9), or spawned directly when it is off or unreachable.
    from tmg.broker.launch import connect

    return connect(spec, start_timeout)


class _NotPlur(Exception):
    """The started server lacks what memory needs (the message says what)."""


class MemoryRuntime(PooledServer):
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
        super().__init__(spec, start_timeout=start_timeout, connect=connect, warn=warn)
        self._on_result = on_result
        self._call_timeout = call_timeout
        self._debug = debug
        self._client: PlurClient | None = None
        self.transport: str | None = None  # how it was reached: warm broker, or which cold start

    @property
    def call_timeout(self) -> float:
        return self._call_timeout

    async def _ready(self, conn: StartableCaller) -> None:
        client = PlurClient(conn, timeout=self._call_timeout, on_result=self._on_result)
        missing = [tool for tool in _NEEDED if not client.surface.can_call(tool)]
        if missing:
            await conn.close()
            raise _NotPlur(f"memory server {self.name!r} offers neither {', '.join(missing)} nor plur_admin "
                           "(is it PLUR?); memory is off for this session")
        self._client = client

    def _on_ready(self) -> None:
        client, conn = self._client, self._conn
        assert client is not None
        route = "directly" if client.surface.is_direct("plur_inject_hybrid") else "through plur_admin"
        self.transport = self.route
        via = f", via {self.transport}" if self.transport else ""
        self._debug(f"memory server {self.name!r} ready ({len(conn.tool_names)} tools, recall {route}{via})")

    def _failure(self, exc: Exception) -> str:
        if isinstance(exc, _NotPlur):
            return str(exc)
        detail = str(exc) if isinstance(exc, (McpStartError, OSError)) else f"{type(exc).__name__}: {exc}"
        return f"memory server {self.name!r} did not start ({detail}); memory is off for this session"

    def _closing_failed(self, exc: Exception) -> None:
        self._debug(f"closing the memory server: {exc}")

    def for_session(self, on_result: Callable[[CallResult[Any]], None] | None) -> ClientSource:
        """A ClientSource over this (shared) server whose calls are counted by `on_result`:
        each session keeps its own write report while the process keeps one server."""
        return SessionClients(self, on_result)

    async def ready(self, wait: float) -> StartableCaller | None:
        """The started connection, waiting at most `wait` seconds; None if not usable."""
        return self._conn if await self.client(wait) is not None else None

    async def client(self, wait: float) -> PlurClient | None:
        """The client, waiting at most `wait` seconds for the start to finish; None if not usable."""
        if self._client is None:
            await self.wait(wait)
        return self._client if self.state == "ready" else None

    def describe(self) -> str:
        """One line for `/memory`."""
        if self.state == "ready" and self._client is not None:
            gateway = "" if self._client.surface.is_direct("plur_inject_hybrid") else ", tools through plur_admin"
            via = f" · via {self.transport}" if self.transport else ""
            return f"server {self.name}: ready{gateway}{via}"
        if self.state == "failed":
            return f"server {self.name}: failed — {self.failure}"
        if self.state == "off":
            return "server: none (memory was off when the session started)"
        return f"server {self.name}: {self.state}"

    async def close(self) -> None:
        """Stop the server without waiting for it to exit by itself (the connection is quick)."""
        self._client = None
        await super().close()


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
    """The process's memory servers (a ServerPool): each started once, shared by the sessions that
    follow (the REPL's /new and /mode), and closed when the process is done with them."""

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
        self._pool: ServerPool[MemoryRuntime] = ServerPool()

    def runtime_for(self, config: Config, errlog: Path | None = None) -> MemoryRuntime:
        """The runtime of `config`'s memory server: the running one when the spec is the same."""
        spec = memory_server_spec(config, errlog)
        if spec is None:
            return MemoryRuntime(None)
        entry = config.mcp_servers[config.memory.server]
        return self._pool.get(spec, lambda: MemoryRuntime(spec, start_timeout=entry.timeout, warn=self._warn,
                                                          debug=self._debug, connect=self._connect),
                              reuse=("starting", "ready", "failed"))

    async def aclose(self) -> None:
        """Stop every server without waiting for it to exit by itself."""
        await self._pool.aclose()
