"""The tools of the configured MCP servers, offered to the model as `mcp_<server>_<tool>` (SPEC §7).

Every `MCP_SERVERS` entry except the memory server (tmg drives that one itself while memory is
on) is started once per process, in the background and in parallel, as the session opens (the
lifecycle is tmg.mcp.pool's, shared with the memory servers). A `WARM: true` server is
reached through the memory broker, which keeps it running between tmg runs (one per spec and
working folder). A turn offers the tools of the servers ready at that moment: a prompt waits
for a server still starting as long as its remembered starts needed (tmg.mcp.start_times),
bounded, or a fixed `TMG_MCP_WAIT` seconds; a server left out is said on stderr, once, and its
tools join from the next turn on.

A tool's `isError` result goes back to the model as an error result, and so do a JSON-RPC error
answer and a call past its timeout (the SDK cancels it): the server stays. A transport failure
(the connection closed or the server died) is an error result naming the server and one warning
to the user. A URL server is then reconnected: at once when it no longer knows the session (HTTP
404, the call is sent again), else in the background with backoff, bounded (`RECONNECT_DELAYS_S`),
its tools back from the next turn once it answers; a stdio server's tools are withdrawn for the
rest of the process. `/mcp reconnect NAME` starts any server afresh. A server that says its
tools changed is listed again at the next turn's start (`settle`). Which tools are offered (a
server's TOOLS, the cap, deferred schemas) is tool_offer.py's. A server that does
not start costs one warning; the chat goes on. A `REQUIRES_CONSENT: true` server is started and
its tools offered, and the permission engine asks before each of its calls. The shipped PLUR
entry tmg adds for memory by itself is not started for tools. A prompt's `@server:uri` is read
from these servers (`attach_resources`, grammar in tmg.mcp.resource_refs), and a server
with `SAMPLING: true` may ask the session's model (tmg.mcp.sampling).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager, Protocol

from tmg.config.model import Config, McpServerConfig
from tmg.mcp.errors import McpCallError, McpCallFailed, McpCallTimeout, McpSessionLost, SamplingDeclined
from tmg.mcp.outcome import ToolOutcome, ToolSpec
from tmg.mcp.pool import PooledServer, ServerPool
from tmg.mcp.resource_refs import (MAX_REFERENCES, Attached, find_refs, missing_block, resource_block,
                                           unknown_servers)
from tmg.mcp.start_times import StartTimes
from tmg.mcp.spec import ServerSpec, spec_from_config
from tmg.permissions.action import Effect, ToolAction
from tmg.tools.registry import ToolResult
from tmg.tools.tool_offer import DEFER_SHARE, FIND_SCHEMA, FIND_TOOLS, ToolFilter, defer_limit, search

if TYPE_CHECKING:
    from tmg.mcp.callbacks import ElicitFn, SampleFn
    from tmg.mcp.connection import ProgressFn
    from tmg.mcp.oauth import OAuthStore, ShowLogin

# Told of a running call's progress: the tool's public name, progress, total, message.
ToolProgress = Callable[[str, float, "float | None", "str | None"], None]

READY_WAIT_S = 0.5  # the least a prompt waits for a server still starting
# The cold path (issue 15): a prompt waits for a server still starting as long as its remembered
# starts needed, times a factor plus a margin for a busier machine, within MAX_COLD_WAIT_S (and its
# TIMEOUT); a server never started here gets the bound. A ready server ends the wait at once.
COLD_WAIT_FACTOR = 3.0
COLD_WAIT_MARGIN_S = 1.0
MAX_COLD_WAIT_S = 10.0
MAX_NAME_CHARS = 64  # OpenAI's limit on a function name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
# Seconds before each background attempt to reconnect a URL server whose connection dropped;
# after the last one the server is withdrawn (`/mcp reconnect NAME` tries again).
RECONNECT_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
# How a WARM server was reached (tmg.broker.launch's routes), as `/mcp` says it.
_WARMTH = {"warm broker": "warm (kept by the broker)",
           "cold start (broker started)": "warm (the broker started it now)",
           "cold start (direct spawn)": "warm wanted, but started directly (no broker could be had)"}


class Connection(Protocol):
    """What a server's connection offers (McpConnection; tests pass fakes)."""

    @property
    def tools(self) -> dict[str, ToolSpec]: ...

    async def start(self) -> None: ...

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = ...) -> ToolOutcome: ...

    async def close(self) -> None: ...


def one_line(text: str, limit: int = 200) -> str:
    """A description on one line, cut: what a search result lists."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _connect(spec: ServerSpec, start_timeout: float) -> Connection:
    from tmg.mcp.connection import McpConnection

    return McpConnection(spec, start_timeout=start_timeout)


def _connect_warm(spec: ServerSpec, start_timeout: float) -> Connection:
    # A WARM server through the broker (kept warm per spec, working folder included), or spawned
    # directly when the broker is off or cannot be had (tmg.broker.launch).
    from tmg.broker.launch import connect

    return connect(spec, start_timeout, kind="tools")


def public_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """`mcp_<server>_<tool>` with every character outside `[A-Za-z0-9_-]` made `_`, at most 64
    characters, and made unique against `taken` with a numeric suffix."""
    base = _UNSAFE.sub("_", f"mcp_{server}_{tool}")[:MAX_NAME_CHARS]
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name = base[: MAX_NAME_CHARS - len(suffix)] + suffix
        n += 1
    return name


def offered_entries(config: Config, warn: Callable[[str], None]) -> list[McpServerConfig]:
    """The MCP_SERVERS entries whose tools the model may get: not the memory server while memory
    is on, not the shipped PLUR tmg adds for memory. A server that requires consent is offered:
    the permission engine asks before each of its calls."""
    entries = []
    for name, entry in config.mcp_servers.items():
        if config.memory.enabled and name == config.memory.server:
            continue
        if is_shipped(config, name):  # the PLUR tmg adds for memory, not a server the user declared
            continue
        entries.append(entry)
    return entries


def is_shipped(config: Config, name: str) -> bool:
    """True for an entry tmg added itself (the shipped memory server), not one from the config."""
    prefix = f"MCP_SERVERS.{name}."
    origins = [origin for path, origin in config.origins.items() if path.startswith(prefix)]
    return bool(origins) and all(origin == "default" for origin in origins)


def mcp_roots(config: Config, cwd: Path | None) -> tuple[str, ...]:
    """The folders MCP servers may work in: the working folder, then ROOTS (`~` expanded, a
    relative one against the working folder), each once."""
    base = cwd or Path.cwd()
    folders = [base] + [base / Path(root).expanduser() for root in config.roots]
    return tuple(dict.fromkeys(str(folder.resolve()) for folder in folders))


class McpToolServer(PooledServer):
    """One server whose tools are offered: its start in the background (tmg.mcp.pool), its calls."""

    def __init__(self, spec: ServerSpec, start_timeout: float, connect: Callable[[ServerSpec, float], Connection],
                 warn: Callable[[str], None], *, warm: bool = False, times: StartTimes | None = None) -> None:
        super().__init__(spec, start_timeout=start_timeout, connect=self._wired(connect), warn=warn)
        self.warm = warm  # kept warm by the broker (WARM: true)
        self._times = times
        self._told_late = False
        self._told_mismatch: set[str] = set()
        self.log: Callable[[str], None] = lambda _line: None  # its log messages: shown under --debug
        self.ask_user: ElicitFn | None = None  # the REPL's form; None in a one-shot
        self.sampler: SampleFn | None = None  # the latest session's model, under consent (SAMPLING: true)
        self._uris: list[str] | None = None  # its resource URIs, once listed (Tab completion)
        self.hold_screen: Callable[[], ContextManager[None]] = nullcontext  # the latest session's waiting line
        self._reconnecting: asyncio.Task[None] | None = None
        self._restart_lock = asyncio.Lock()
        self.call_timeout: float | None = None  # CALL_TIMEOUT (None: the session's TOOL_TIMEOUT)
        self.call_timeout_max = 600.0  # CALL_TIMEOUT_MAX
        self.oauth_store: OAuthStore | None = None  # where OAuth logins are kept (oauth.py)
        self.show_login: ShowLogin | None = None  # the REPL shows where to log in; None in a one-shot

    def _wired(self, connect: Callable[[ServerSpec, float], Connection]) -> Callable[[ServerSpec, float], Connection]:
        """`connect`, with the connection told where a server's questions and log lines go."""
        def wired(spec: ServerSpec, start_timeout: float) -> Connection:
            conn = connect(spec, start_timeout)
            if hasattr(conn, "elicit"):  # a server's request for input: a form, or one line declining it
                conn.elicit = self._elicit
            if hasattr(conn, "on_log"):
                conn.on_log = lambda line: self.log(line)
            if hasattr(conn, "sample"):  # asked only when SAMPLING advertised it (connection.py)
                conn.sample = self._sample
            if hasattr(conn, "oauth_store"):  # a server that wants OAuth: its stored login, or a new one
                conn.oauth_store, conn.show_login = self.oauth_store, self.show_login
            return conn
        return wired

    async def _elicit(self, server: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self.ask_user is not None:
            with self.hold_screen():
                return await self.ask_user(server, message, schema)
        brief = " ".join(message.split())[:120]
        self._warn(f"MCP server {server} asked for input (\"{brief}\"); a one-shot cannot ask you, so it was "
                   "declined (run tmg without a prompt to answer such questions)")
        return None

    async def _sample(self, server: str, params: dict[str, Any]) -> tuple[str, str, str]:
        if self.sampler is None:
            raise SamplingDeclined("no tmg session is open to answer it")
        with self.hold_screen():
            return await self.sampler(server, params)

    def call_bounds(self, timeout: float) -> tuple[float, float]:
        """(seconds of silence a call may take, the most it may take with progress), given TOOL_TIMEOUT."""
        idle = self.call_timeout or timeout
        return idle, max(idle, self.call_timeout_max)

    @property
    def transport(self) -> str:
        assert self.spec is not None
        return "http" if self.spec.url else "stdio"

    def cold_wait(self) -> float:
        """How long, from its start, a prompt waits for this server: what its remembered starts
        needed (with room for a busier machine), bounded; the bound itself before it ever started."""
        bound = min(self.start_timeout, MAX_COLD_WAIT_S)
        expected = self._times.expected(self.spec) if self._times is not None and self.spec is not None else None
        if expected is None:
            return bound
        return min(bound, max(READY_WAIT_S, expected * COLD_WAIT_FACTOR + COLD_WAIT_MARGIN_S))

    def tell_late(self) -> None:
        """Say once that a prompt goes without this server's tools because it is still starting
        (a one-shot would otherwise lose them without a word)."""
        if self.state == "starting" and not self._told_late:
            self._told_late = True
            self._warn(f"MCP server {self.name} is still starting after {self.waited():.1f} s; its tools are not "
                       "offered with this prompt")

    def _on_ready(self) -> None:
        # A warm broker's answer says nothing about a cold start: only cold starts are remembered.
        if self._times is not None and self.spec is not None and self.start_seconds is not None \
                and self.route != "warm broker":
            self._times.record(self.spec, self.start_seconds)

    def _failure(self, exc: Exception) -> str:
        return f"MCP server {self.name} did not start ({exc}); its tools are off for this session"

    @property
    def tools(self) -> dict[str, ToolSpec]:
        return self._conn.tools if self.state == "ready" and self._conn is not None else {}

    @property
    def tools_changed(self) -> bool:
        """The server said its tool list changed (notifications/tools/list_changed) since it was listed."""
        return self.state == "ready" and bool(getattr(self._conn, "tools_changed", False))

    async def refresh_tools(self) -> None:
        """List the tools again; a failed listing keeps the tools listed before, with one warning."""
        try:
            await self._conn.refresh_tools()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the old list stays usable
            self._warn(f"MCP server {self.name} changed its tools but listing them failed ({exc}); "
                       "the tools listed before stay")

    @property
    def instructions(self) -> str:
        return str(getattr(self._conn, "instructions", "") or "")

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float,
                   on_progress: ProgressFn | None = None) -> ToolResult:
        idle, most = self.call_bounds(timeout)
        if self.state == "reconnecting" and not await self.reconnect():  # a call is a reason to try now
            return ToolResult(f"error: MCP server {self.name} is unreachable ({self.failure}); tmg keeps trying "
                              "to reconnect, its tools come back when it answers", is_error=True)
        if self.state != "ready":
            return ToolResult(f"error: MCP server {self.name} is not available; its tools are withdrawn", True)
        try:
            try:
                outcome = await self._conn.call_tool(tool, arguments, idle, max_timeout=most, on_progress=on_progress)
            except McpSessionLost:  # the server restarted: the call never ran, so it is sent again
                if not await self.reconnect(force=True):
                    raise
                outcome = await self._conn.call_tool(tool, arguments, idle, max_timeout=most, on_progress=on_progress)
        except asyncio.CancelledError:
            raise
        except McpCallTimeout as exc:  # slow, not broken: the SDK cancelled the call, the server stays
            if exc.at_limit:
                return ToolResult(f"error: {self.name} was still working after {most:g} s, the most a call may "
                                  "take (CALL_TIMEOUT_MAX); the call was cancelled (try something smaller)",
                                  is_error=True)
            return ToolResult(f"error: {self.name} did not answer within {idle:g} s; the call was "
                              "cancelled (try something smaller, or another way)", is_error=True)
        except McpCallFailed as exc:  # a JSON-RPC error answer: this call failed, the server stands
            return ToolResult(f"error: {self.name} answered with an error: {exc.reason}", is_error=True)
        except Exception as exc:  # McpCallError above all: a crash, a closed pipe, a protocol error
            reason = str(exc) if isinstance(exc, McpCallError) else f"{type(exc).__name__}: {exc}"
            if self.spec is not None and self.spec.url is not None:
                if await self.recover(reason):
                    return ToolResult(f"error: MCP server {self.name} lost its connection ({reason}) and was "
                                      "reconnected; the call may not have run: call it again if it should",
                                      is_error=True)
                return ToolResult(f"error: MCP server {self.name} lost its connection ({reason}); the call may "
                                  "not have run; tmg is reconnecting, its tools come back when it answers",
                                  is_error=True)
            self.withdraw(reason)
            return ToolResult(f"error: MCP server {self.name} failed ({reason}); its tools are withdrawn "
                              "for this session", is_error=True)
        if outcome.mismatch and tool not in self._told_mismatch:  # the text is used; said once per tool
            self._told_mismatch.add(tool)
            self._warn(f"MCP server {self.name}: {tool} returned structured content that does not match its "
                       f"declared outputSchema ({outcome.mismatch}); its text is used")
        if outcome.is_error:  # the tool's own failure (isError): the model is told it is one
            return ToolResult(f"error: {outcome.text or 'the tool reported an error'}", is_error=True)
        return ToolResult(outcome.text, images=outcome.images)

    async def prompt(self, prompt: str, arg: str, command: str) -> str:
        """The server's prompt `prompt` filled in from `arg` (`key=value` words, or else the whole
        text for its first argument), as one text. Raises McpCallError with a line for the user."""
        conn: Any = self._conn
        params = await conn.prompt_arguments(prompt)
        if params is None:
            raise McpCallError(f"MCP server {self.name} has no prompt named {prompt}")
        words = arg.split()
        if words and all("=" in w for w in words):
            arguments = dict(w.split("=", 1) for w in words)
        elif arg.strip() and params:
            arguments = {params[0][0]: arg.strip()}
        else:
            arguments = {}
        missing = [name for name, required in params if required and name not in arguments]
        if missing:
            usage = " ".join(f"{name}=..." for name, _required in params)
            raise McpCallError(f"prompt {prompt} of MCP server {self.name} needs {', '.join(missing)} "
                               f"({command} {usage})")
        return await conn.get_prompt(prompt, arguments)

    async def finish_starting(self) -> None:
        """Start it if it has not started, and wait for a start under way (bounded): for a server
        the user named (a resource, a prompt), worth its start."""
        if self.state == "starting":
            self.start()
            await self.wait(self.start_timeout)

    async def read_resource(self, uri: str, timeout: float) -> dict[str, Any]:
        """resources/read `uri` (wire form), waiting for the server's start when it is still starting.
        Raises McpCallError with the reason, for one line."""
        await self.finish_starting()
        if self.state != "ready" or self._conn is None:
            raise McpCallError(f"MCP server {self.name} is not ready ({self.state})")
        if not hasattr(self._conn, "read_resource"):  # a WARM server's broker connection
            raise McpCallError("reading resources is not available for WARM servers (WARM: true)")
        conn: Any = self._conn
        try:
            return await conn.read_resource(uri, self.call_bounds(timeout)[0])
        except McpCallFailed as exc:
            raise McpCallError(f"{self.name} answered: {exc.reason}") from exc

    async def resource_uris(self, timeout: float) -> list[str]:
        """The server's resource URIs (resources/list), listed once and kept: for Tab completion.
        [] when the server is not ready, lists none, or cannot list them in `timeout` seconds."""
        if self.state == "starting":
            await self.wait(timeout)
        if self._uris is None and self.state == "ready" and hasattr(self._conn, "list_resource_uris"):
            conn: Any = self._conn
            try:
                self._uris = await conn.list_resource_uris(timeout)
            except McpCallError:
                self._uris = []  # a server without resources: not asked again
        return self._uris or []

    async def reconnect(self, *, force: bool = False) -> bool:
        """Start the server afresh (a new session over a new transport); True once it is ready.

        One restart at a time: a call and the background retries share it. Without `force`, a
        server made ready meanwhile is left as it is."""
        async with self._restart_lock:
            if self.state == "closed" or self._conn is None:
                return False
            if self.state == "ready" and not force:
                return True
            if not hasattr(self._conn, "restart"):  # a warm server's broker connection: the broker restarts it
                self.failure = "kept by the broker; `tmg memory stop` restarts the broker's servers"
                return False
            was = self.state
            try:
                await self._conn.restart()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - unreachable still: said by the caller
                self.failure = str(exc)
                if was == "ready":
                    self.state = "reconnecting"
                return False
            self.state, self.failure = "ready", None
            self._uris = None  # a new session may list other resources
            if was == "reconnecting":  # came back by itself (a `/mcp reconnect` says so on its own)
                self._warn(f"MCP server {self.name} is back; its tools are offered again")
            return True

    async def recover(self, reason: str) -> bool:
        """A URL server's connection dropped: say so once and reconnect at once (a restart is
        quick); if it is not back yet, keep trying in the background with backoff. True when back."""
        if self.state != "ready":
            return False
        self.state, self.failure = "reconnecting", reason
        self._warn(f"MCP server {self.name} lost its connection ({reason}); reconnecting")
        if await self.reconnect():
            return True
        self._reconnecting = asyncio.get_running_loop().create_task(
            self._keep_reconnecting(), name=f"mcp-reconnect:{self.name}")
        return False

    async def _keep_reconnecting(self) -> None:
        for delay in RECONNECT_DELAYS_S:
            await asyncio.sleep(delay)
            if self.state != "reconnecting" or await self.reconnect():
                return
        if self.state == "reconnecting":
            self.state = "withdrawn"
            self._warn(f"MCP server {self.name} did not come back after {len(RECONNECT_DELAYS_S)} attempts "
                       f"({self.failure}); its tools are withdrawn (/mcp reconnect {self.name} tries again)")

    async def close(self) -> None:
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        await super().close()

    def withdraw(self, reason: str) -> bool:
        if not super().withdraw(reason):
            return False
        self._warn(f"MCP server {self.name} failed ({reason}); its tools are withdrawn for this session")
        return True

    def status(self) -> str:
        """One line for `/mcp` and `tmg mcp`: state (and why), transport, tools, warm."""
        if self.state == "ready":
            state = f"ready, {len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}"
        elif self.state == "starting":
            state = f"starting ({self.waited():.1f} s so far)" if self.started_at is not None else "not started"
        elif self.state in ("failed", "withdrawn", "reconnecting"):
            state = f"{self.state} — {self.failure}"  # why, in the words its warning used
        else:
            state = self.state
        warm = _WARMTH.get(self.route or "", "warm") if self.warm else "not warm"
        return f"{self.name}: {state} · {self.transport} · {warm}"


class McpTools:
    """A ToolSource for the registry: one session's view of the process's MCP tool servers."""

    def __init__(self, servers: list[McpToolServer], ready_wait: float | None = None, *,
                 consent: frozenset[str] = frozenset(), filters: dict[str, ToolFilter] | None = None, defer_chars: int | None = None,
                 warn: Callable[[str], None] = lambda _m: None) -> None:
        """`filters`: each server's TOOLS include/exclude, by server name. `defer_chars`: past this
        many characters of schemas the tools are offered on demand (tool_offer.py); None: never.
        `consent`: the servers marked REQUIRES_CONSENT (every call asks)."""
        self._servers = servers
        self._consent = consent  # names of the servers marked REQUIRES_CONSENT: every call asks
        self._ready_wait = ready_wait
        # Every public name once offered, with its server and the tool as last listed (judged so
        # while its server reconnects; a call to a withdrawn one is told why it fails).
        self._names: dict[str, tuple[McpToolServer, ToolSpec]] = {}
        self._filters = filters or {}
        self._defer_chars = defer_chars
        self._warn = warn
        self._deferring = False
        self._loaded: set[str] = set()  # deferred tools mcp_find_tools loaded, offered from then on
        self._told_deferred = False
        self._told_cap: int | None = None
        self.on_progress: ToolProgress | None = None  # the waiting line, when there is one

    def instructions(self) -> list[tuple[str, str]]:
        """(server, instructions) of the servers ready now, for the system message."""
        return [(s.name, s.instructions) for s in self._servers if s.state == "ready" and s.instructions]

    async def attach_resources(self, text: str, timeout: float) -> tuple[str, Attached]:
        """The prompt to send and the resources its `@server:uri` references name, read from the
        servers this session offers, all at once (tmg.mcp.resource_refs). A reference that
        cannot be read is one warning and a line in its place; the prompt goes on."""
        servers = {s.name: s for s in self._servers}
        if servers and "@" in text:
            for name in unknown_servers(text, servers):
                self._warn(f"@{name}: in the prompt names no MCP server (servers: {', '.join(servers)}); "
                           "it is sent as typed")
        text, refs = find_refs(text, servers)
        attached = Attached()
        if not refs:
            return text, attached
        if len(refs) > MAX_REFERENCES:
            self._warn(f"the prompt names {len(refs)} MCP resources; only the first {MAX_REFERENCES} are read")
            refs = refs[:MAX_REFERENCES]
        results = await asyncio.gather(*(servers[r.server].read_resource(r.uri, timeout) for r in refs),
                                       return_exceptions=True)
        for ref, result in zip(refs, results):
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                reason = str(result) if isinstance(result, McpCallError) else f"{type(result).__name__}: {result}"
                self._warn(f"MCP resource {ref} was not attached: {reason}; the prompt is sent without it")
                attached.blocks.append(missing_block(ref, reason))
            else:
                attached.blocks.append(resource_block(ref, result, attached.images))
        return text, attached

    def server_names(self) -> list[str]:
        """The names of the servers this session offers (what `@name:` may name)."""
        return [s.name for s in self._servers]

    async def resource_uris(self, name: str, timeout: float = 2.0) -> list[str]:
        """Server `name`'s resource URIs, for Tab completion of `@name:` (bounded; [] when none)."""
        server = next((s for s in self._servers if s.name == name), None)
        return await server.resource_uris(timeout) if server is not None else []

    @property
    def consent(self) -> frozenset[str]:
        """The servers marked REQUIRES_CONSENT: every call to one, and every sampling request, asks."""
        return self._consent

    def use_sampler(self, sampler: SampleFn) -> None:
        """This session's model answers its servers' sampling requests (those with SAMPLING: true)."""
        for server in self._servers:
            server.sampler = sampler

    def show_on(self, progress: ToolProgress, hold: Callable[[], ContextManager[None]]) -> None:
        """The session's waiting line: calls' progress is shown on it, and it is held off the
        screen while a server's question is answered."""
        self.on_progress = progress
        for server in self._servers:
            server.hold_screen = hold

    @property
    def servers(self) -> list[McpToolServer]:
        return list(self._servers)

    async def settle(self) -> None:
        """At a phase boundary (before a turn's schemas): list again the tools of servers that said
        their tools changed, and wait for servers still starting, all at once: each as long as its
        start needs (counted from its start, so later turns do not wait again), or the fixed
        `ready_wait`. A server left out is said once."""
        changed = [s for s in self._servers if s.tools_changed]
        if changed:
            await asyncio.gather(*(s.refresh_tools() for s in changed))
        starting = [s for s in self._servers if s.state == "starting"]
        if starting:
            await asyncio.gather(*(s.wait(self._bound(s)) for s in starting))
            for server in starting:
                server.tell_late()

    def _bound(self, server: McpToolServer) -> float:
        if self._ready_wait is not None:
            return self._ready_wait
        return server.cold_wait() - server.waited()

    def _current(self) -> dict[str, tuple[McpToolServer, ToolSpec]]:
        """The tools of the servers ready now, by public name."""
        current: dict[str, tuple[McpToolServer, ToolSpec]] = {}
        for server in self._servers:
            allowed = self._filters.get(server.name, ToolFilter())
            for tool in server.tools.values():
                if allowed.allows(tool.name):
                    # mcp_find_tools is taken: a server's tool never shadows the deferred search
                    current[public_name(server.name, tool.name, {*current, FIND_TOOLS})] = (server, tool)
        self._names.update(current)
        return current

    def schemas(self) -> list[dict[str, Any]]:
        """The tools of the servers ready now, in OpenAI `tools` format; past the deferral limit,
        `mcp_find_tools` and the tools it loaded."""
        entries = {
            name: {"type": "function", "function": {
                "name": name, "description": tool.description,
                "parameters": tool.input_schema or {"type": "object", "properties": {}}}}
            for name, (_server, tool) in self._current().items()
        }
        size = len(json.dumps(list(entries.values()))) if self._defer_chars is not None else 0
        self._deferring = self._defer_chars is not None and size > self._defer_chars
        if not self._deferring:
            return list(entries.values())
        if not self._told_deferred:
            self._told_deferred = True
            self._warn(f"the MCP servers' {len(entries)} tools would add {size:,} characters to every request "
                       f"(more than {DEFER_SHARE:.0%} of MAX_HISTORY_TOKENS); the model finds and loads them "
                       f"with {FIND_TOOLS} (narrow them with MCP_SERVERS.<name>.TOOLS: {{include: [...]}})")
        return [FIND_SCHEMA, *(entry for name, entry in entries.items() if name in self._loaded)]

    def over_limit(self, dropped: list[str], limit: int) -> None:
        """The registry left `dropped` out of a request that may carry `limit` tools: said once per count."""
        if self._told_cap == len(dropped):
            return
        self._told_cap = len(dropped)
        servers = sorted({self._names[n][0].name for n in dropped if n in self._names})
        self._warn(f"{len(dropped)} MCP tools are not offered (of servers {', '.join(servers)}): a request carries "
                   f"at most {limit} tools; choose them with MCP_SERVERS.<name>.TOOLS: {{include: [...], exclude: [...]}}")

    def owns(self, name: str) -> bool:
        if name == FIND_TOOLS:
            return self._deferring
        if name not in self._names:
            self._current()
        return name in self._names

    def _find(self, arguments: dict[str, Any]) -> ToolResult:
        """mcp_find_tools: load the tools best matching the query; they are offered from the next turn."""
        query = str(arguments.get("query") or "").strip()
        current = self._current()
        found = search(query, {name: tool.description for name, (_server, tool) in current.items()})
        if not found:
            return ToolResult(f"no MCP tool matches {query!r}; try other words (tools: {len(current)})")
        self._loaded.update(found)
        lines = [f"{name}: {one_line(current[name][1].description)}" for name in found]
        return ToolResult("loaded, callable from now on:\n" + "\n".join(lines))

    def action(self, name: str, arguments: dict[str, Any]) -> ToolAction:
        """An MCP tool's effect from its annotations (MCP 2025-06-18): readOnlyHint means it only
        reads; without annotations nothing is known, so the permission engine asks. The prompt
        shows the arguments: they are exactly what the server will be sent."""
        if name == FIND_TOOLS:  # reads the servers' tool lists, nothing else
            return ToolAction(name, "read")
        server, spec = self._names[name]
        hints = spec.annotations or {}
        effect: Effect = "read" if hints.get("readOnlyHint") is True else (
            "write" if hints.get("readOnlyHint") is False else "unknown")
        preview = json.dumps(arguments, ensure_ascii=False, indent=1)
        return ToolAction(name, effect, server=server.name, preview=preview,
                          requires_consent=server.name in self._consent)

    def call_limit(self, name: str, timeout: float) -> float:
        """The most a call of `name` may take (its server's CALL_TIMEOUT_MAX: progress extends it)."""
        if name == FIND_TOOLS:
            return timeout
        server, _tool = self._names[name]
        return server.call_bounds(timeout)[1]

    async def call(self, name: str, arguments: dict[str, Any], timeout: float) -> ToolResult:
        if name == FIND_TOOLS:
            return self._find(arguments)
        server, tool = self._names[name]
        progress = partial(self.on_progress, name) if self.on_progress is not None else None
        return await server.call(tool.name, arguments, timeout, progress)


class McpToolServers:
    """The process's MCP tool servers (a ServerPool): each started once, shared by the sessions
    that follow (the REPL's /new and /mode), and closed when the process is done with them."""

    def __init__(self, *, warn: Callable[[str], None] = lambda _m: None,
                 connect: Callable[[ServerSpec, float], Connection] = _connect,
                 connect_warm: Callable[[ServerSpec, float], Connection] = _connect_warm,
                 ask_user: ElicitFn | None = None, log: Callable[[str], None] | None = None,
                 oauth_store: OAuthStore | None = None, show_login: ShowLogin | None = None) -> None:
        self._log = log  # servers' log messages (tmg --debug); None: not shown
        self._oauth_store = oauth_store  # OAuth logins (None: no server gets OAuth)
        self._show_login = show_login  # the REPL shows where to log in; None: a login is one line (one-shot)
        self._ask_user = ask_user  # the REPL's form for a server's questions; None: declined (one-shot)
        self._warn = warn
        self._connect = connect
        self._connect_warm = connect_warm
        self._pool: ServerPool[McpToolServer] = ServerPool()

    @property
    def servers(self) -> list[McpToolServer]:
        return list(self._pool)

    def tools_for(self, config: Config, home: Path | None = None, *, ready_wait: float | None = None,
                  warn: Callable[[str], None] | None = None, cwd: Path | None = None) -> McpTools:
        """The ToolSource of `config`'s servers, reusing the running ones. Not started: call start().

        `ready_wait`: a fixed wait per prompt (TMG_MCP_WAIT); None waits as long as each
        server's remembered starts need (`McpToolServer.cold_wait`). Each server is told its
        roots: the working folder `cwd` and the config's ROOTS."""
        say = warn or self._warn
        roots = mcp_roots(config, cwd)
        times = StartTimes(home)
        chosen = []
        consent, filters = set(), {}
        for entry in offered_entries(config, say):
            if entry.requires_consent:
                consent.add(entry.name)
            filters[entry.name] = ToolFilter(entry.tools_include, entry.tools_exclude)
            errlog = home / f"mcp-{_UNSAFE.sub('_', entry.name)}.log" if home is not None else None
            spec = spec_from_config(entry, errlog, roots)
            connect = self._connect_warm if entry.warm and spec.command else self._connect
            server = self._pool.get(spec, lambda: self._new_server(spec, entry, connect, say, times))
            server.call_timeout, server.call_timeout_max = entry.call_timeout, entry.call_timeout_max
            server.set_warn(say)  # the latest session's: its transcript is the open one
            chosen.append(server)
        return McpTools(chosen, ready_wait, consent=frozenset(consent), filters=filters,
                        defer_chars=defer_limit(config.max_history_tokens), warn=say)

    def _new_server(self, spec: ServerSpec, entry: McpServerConfig, connect: Callable[[ServerSpec, float], Connection],
                    say: Callable[[str], None], times: StartTimes) -> McpToolServer:
        server = McpToolServer(spec, entry.timeout, connect, say, warm=entry.warm, times=times)
        if entry.sampling and connect is self._connect_warm:
            say(f"MCP server {entry.name}: SAMPLING is not available for WARM servers; its sampling requests "
                "are declined (set WARM: false to allow them)")
        server.ask_user = self._ask_user
        server.oauth_store, server.show_login = self._oauth_store, self._show_login
        if self._log is not None:
            server.log = self._log
        return server

    async def reconnect(self, name: str) -> str:
        """`/mcp reconnect NAME`: start the server afresh, whatever its state; one line saying how it went."""
        live = [s for s in self._pool if s.state != "closed"]
        server = next((s for s in live if s.name == name), None)
        if server is None:
            return f"no MCP tool server named {name} (servers: {', '.join(s.name for s in live) or 'none'})"
        if server.state == "starting":
            return f"MCP server {name} is still starting"
        if await server.reconnect(force=True):
            count = len(server.tools)
            return f"MCP server {name} reconnected: {count} tool{'s' if count != 1 else ''}"
        return f"MCP server {name} did not reconnect ({server.failure}); check it runs, then /mcp reconnect {name}"

    async def prompt(self, server_name: str, prompt: str, arg: str) -> str:
        """`/mcp__SERVER__PROMPT args`: the server's prompt, filled in, as the text to send.

        `args` is `key=value` words, or else the whole text for the prompt's first argument.
        Raises McpCallError with a line for the user when it cannot be had."""
        live = [s for s in self._pool if s.state != "closed"]
        server = next((s for s in live if _UNSAFE.sub("_", s.name) == server_name), None)
        if server is not None:
            await server.finish_starting()
        if server is None or server.state != "ready":
            ready = ", ".join(s.name for s in live if s.state == "ready") or "none"
            raise McpCallError(f"no ready MCP server named {server_name} (ready: {ready})")
        return await server.prompt(prompt, arg, f"/mcp__{server_name}__{prompt}")

    def start(self) -> None:
        """Start every server not started yet, in parallel (call on the event loop)."""
        self._pool.start()

    def status_lines(self) -> list[str]:
        """One line per server (`/mcp`)."""
        return [server.status() for server in self._pool]

    async def aclose(self) -> None:
        """Stop every server without waiting for it to exit by itself."""
        await self._pool.aclose()
