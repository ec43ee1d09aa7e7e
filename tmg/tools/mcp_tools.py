"""The tools of the configured MCP servers, offered to the model as `mcp_<server>_<tool>` (SPEC §7).

Every `MCP_SERVERS` entry except the memory server (tmg drives that one itself while memory is
on) is started once per process, in the background and in parallel, as the session opens. A
turn offers the tools of the servers ready at that moment: a prompt waits for servers still
starting at most `READY_WAIT_S` (`TMG_MCP_WAIT` seconds), once per turn and only while some
server is still starting; a slower server's tools join from the next turn on.

A tool's `isError` result goes back to the model as an error result, and so does a call past
its timeout (the SDK cancels it; the server stays). A transport failure (the call raised or the
server died) is an error result naming the server and one warning to the user. A URL server
is then reconnected: at once when it no longer knows the session (HTTP 404, the call is sent
again), else in the background with backoff, bounded (`RECONNECT_DELAYS_S`), its tools back
from the next turn once it answers; a stdio server's tools are withdrawn for the rest of the
process. `/mcp reconnect NAME` starts any server afresh. A server that does
not start costs one warning; the chat goes on. A `REQUIRES_CONSENT: true` server is not started:
tmg cannot ask for consent yet. Neither is the shipped PLUR entry tmg adds for memory by itself.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager, Literal, Protocol

from tmg.config.model import Config, McpServerConfig
from tmg.mcp_servers.outcome import McpCallError, McpCallTimeout, McpSessionLost, ToolOutcome, ToolSpec
from tmg.mcp_servers.spec import ServerSpec, spec_from_config
from tmg.permissions.action import Effect, ToolAction
from tmg.tools.registry import ToolResult

if TYPE_CHECKING:
    from tmg.mcp_servers.connection import ElicitFn, ProgressFn

# Told of a running call's progress: the tool's public name, progress, total, message.
ToolProgress = Callable[[str, float, "float | None", "str | None"], None]

READY_WAIT_S = 0.5  # the most a turn waits for servers still starting
MAX_NAME_CHARS = 64  # OpenAI's limit on a function name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

# Seconds before each background attempt to reconnect a URL server whose connection dropped;
# after the last one the server is withdrawn (`/mcp reconnect NAME` tries again).
RECONNECT_DELAYS_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)

State = Literal["starting", "ready", "reconnecting", "failed", "withdrawn", "closed"]


class Connection(Protocol):
    """What a server's connection offers (McpConnection; tests pass fakes)."""

    @property
    def tools(self) -> dict[str, ToolSpec]: ...

    async def start(self) -> None: ...

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = ..., *,
                        max_timeout: float | None = None, on_progress: ProgressFn | None = None) -> ToolOutcome: ...

    async def restart(self) -> None: ...

    async def close(self) -> None: ...


def _connect(spec: ServerSpec, start_timeout: float) -> Connection:
    from tmg.mcp_servers.connection import McpConnection

    return McpConnection(spec, start_timeout=start_timeout)


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
    is on, not the shipped PLUR tmg adds for memory, not a server that requires consent (one line says so)."""
    entries = []
    for name, entry in config.mcp_servers.items():
        if config.memory.enabled and name == config.memory.server:
            continue
        if is_shipped(config, name):  # the PLUR tmg adds for memory, not a server the user declared
            continue
        if entry.requires_consent:
            warn(f"MCP server {name} requires consent, which tmg cannot ask for yet; its tools are off "
                 "(set REQUIRES_CONSENT: false to allow them)")
            continue
        entries.append(entry)
    return entries


def mcp_roots(config: Config, cwd: Path | None) -> tuple[str, ...]:
    """The folders MCP servers may work in: the working folder, then ROOTS (`~` expanded, a
    relative one against the working folder), each once."""
    base = cwd or Path.cwd()
    folders = [base] + [base / Path(root).expanduser() for root in config.roots]
    return tuple(dict.fromkeys(str(folder.resolve()) for folder in folders))


def is_shipped(config: Config, name: str) -> bool:
    """True for an entry tmg added itself (the shipped memory server), not one from the config."""
    prefix = f"MCP_SERVERS.{name}."
    origins = [origin for path, origin in config.origins.items() if path.startswith(prefix)]
    return bool(origins) and all(origin == "default" for origin in origins)


class McpToolServer:
    """One server whose tools are offered: its start in the background, its state, its calls."""

    def __init__(self, spec: ServerSpec, start_timeout: float, connect: Callable[[ServerSpec, float], Connection],
                 warn: Callable[[str], None]) -> None:
        self.spec = spec
        self.name = spec.name
        self.state: State = "starting"
        self.start_timeout = start_timeout
        self._conn = connect(spec, start_timeout)
        self.log: Callable[[str], None] = lambda _line: None  # its log messages: shown under --debug
        if hasattr(self._conn, "elicit"):  # a server's request for input: a form, or one line declining it
            self._conn.elicit = self._elicit
        if hasattr(self._conn, "on_log"):
            self._conn.on_log = lambda line: self.log(line)
        self.ask_user: ElicitFn | None = None  # the REPL's form; None in a one-shot
        self.hold_screen: Callable[[], ContextManager[None]] = nullcontext  # the latest session's waiting line
        self._warn = warn
        self._task: asyncio.Task[None] | None = None
        self._told_late = False
        self.failure: str | None = None  # why it is not ready, when it is not
        self._reconnecting: asyncio.Task[None] | None = None
        self._restart_lock = asyncio.Lock()
        self.call_timeout: float | None = None  # CALL_TIMEOUT (None: the session's TOOL_TIMEOUT)
        self.call_timeout_max = 600.0  # CALL_TIMEOUT_MAX

    async def _elicit(self, server: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self.ask_user is not None:
            with self.hold_screen():
                return await self.ask_user(server, message, schema)
        brief = " ".join(message.split())[:120]
        self._warn(f"MCP server {server} asked for input (\"{brief}\"); a one-shot cannot ask you, so it was "
                   "declined (run tmg without a prompt to answer such questions)")
        return None

    def call_bounds(self, timeout: float) -> tuple[float, float]:
        """(seconds of silence a call may take, the most it may take with progress), given TOOL_TIMEOUT."""
        idle = self.call_timeout or timeout
        return idle, max(idle, self.call_timeout_max)

    def tell_late(self) -> None:
        """Say once that a prompt goes without this server's tools because it is still starting
        (a one-shot would otherwise lose them without a word)."""
        if self.state == "starting" and not self._told_late:
            self._told_late = True
            self._warn(f"MCP server {self.name} is still starting; its tools are not offered with this prompt")

    def set_warn(self, warn: Callable[[str], None]) -> None:
        self._warn = warn

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._start(), name=f"mcp-tools:{self.name}")

    async def _start(self) -> None:
        try:
            await self._conn.start()
        except Exception as exc:  # noqa: BLE001 - whatever broke, the chat goes on without it
            self.state, self.failure = "failed", str(exc)
            self._warn(f"MCP server {self.name} did not start ({exc}); its tools are off for this session")
            return
        if self.state == "starting":
            self.state = "ready"

    @property
    def tools(self) -> dict[str, ToolSpec]:
        return self._conn.tools if self.state == "ready" else {}

    @property
    def instructions(self) -> str:
        return str(getattr(self._conn, "instructions", "") or "")

    async def wait(self, bound: float) -> None:
        """Wait at most `bound` seconds for the start to finish."""
        task = self._task
        if task is None or task.done() or bound <= 0:
            return
        await asyncio.wait({task}, timeout=bound)

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
        except Exception as exc:  # McpCallError above all: a crash, a closed pipe, a protocol error
            reason = str(exc) if isinstance(exc, McpCallError) else f"{type(exc).__name__}: {exc}"
            if self.spec.url is not None:
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
        if outcome.is_error:  # the tool's own failure (isError): the model is told it is one
            return ToolResult(f"error: {outcome.text or 'the tool reported an error'}", is_error=True)
        return ToolResult(outcome.text)

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

    async def reconnect(self, *, force: bool = False) -> bool:
        """Start the server afresh (a new session over a new transport); True once it is ready.

        One restart at a time: a call and the background retries share it. Without `force`, a
        server made ready meanwhile is left as it is."""
        async with self._restart_lock:
            if self.state == "closed":
                return False
            if self.state == "ready" and not force:
                return True
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

    def withdraw(self, reason: str) -> None:
        if self.state != "ready":
            return
        self.state, self.failure = "withdrawn", reason
        self._warn(f"MCP server {self.name} failed ({reason}); its tools are withdrawn for this session")

    async def close(self) -> None:
        self.state = "closed"
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        task = self._task
        if task is not None and not task.done():
            task.cancel()
        try:
            await self._conn.close()
        except Exception:  # noqa: BLE001 - closing must not raise
            pass
        if task is not None:
            await asyncio.wait({task}, timeout=2.0)
            if task.done() and not task.cancelled():
                task.exception()


class McpTools:
    """A ToolSource for the registry: one session's view of the process's MCP tool servers."""

    def __init__(self, servers: list[McpToolServer], ready_wait: float = READY_WAIT_S) -> None:
        self._servers = servers
        self._ready_wait = ready_wait
        self._names: dict[str, tuple[McpToolServer, str]] = {}
        self.on_progress: ToolProgress | None = None  # the waiting line, when there is one

    def instructions(self) -> list[tuple[str, str]]:
        """(server, instructions) of the servers ready now, for the system message."""
        return [(s.name, s.instructions) for s in self._servers if s.state == "ready" and s.instructions]

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
        """Give servers still starting a very short bound (`ready_wait`), all at once."""
        starting = [s for s in self._servers if s.state == "starting"]
        if starting:
            await asyncio.gather(*(s.wait(self._ready_wait) for s in starting))
            for server in starting:
                server.tell_late()

    def _current(self) -> dict[str, tuple[McpToolServer, ToolSpec]]:
        """The tools of the servers ready now, by public name."""
        current: dict[str, tuple[McpToolServer, ToolSpec]] = {}
        for server in self._servers:
            for tool in server.tools.values():
                current[public_name(server.name, tool.name, set(current))] = (server, tool)
        # Names once offered keep their server: a call to a withdrawn one is told why it fails.
        self._names.update({name: (server, tool.name) for name, (server, tool) in current.items()})
        return current

    def schemas(self) -> list[dict[str, Any]]:
        """The tools of the servers ready now, in OpenAI `tools` format."""
        return [
            {"type": "function", "function": {
                "name": name, "description": tool.description,
                "parameters": tool.input_schema or {"type": "object", "properties": {}}}}
            for name, (_server, tool) in self._current().items()
        ]

    def owns(self, name: str) -> bool:
        if name not in self._names:
            self._current()
        return name in self._names

    def action(self, name: str, arguments: dict[str, Any]) -> ToolAction:
        """An MCP tool's effect from its annotations (MCP 2025-06-18): readOnlyHint means it only
        reads; without annotations nothing is known, so the permission engine asks."""
        server, tool_name = self._names[name]
        spec = server.tools.get(tool_name)
        hints = (spec.annotations or {}) if spec is not None else {}
        effect: Effect = "read" if hints.get("readOnlyHint") is True else (
            "write" if hints.get("readOnlyHint") is False else "unknown")
        return ToolAction(name, effect, server=server.name)

    def call_limit(self, name: str, timeout: float) -> float:
        """The most a call of `name` may take (its server's CALL_TIMEOUT_MAX: progress extends it)."""
        server, _tool = self._names[name]
        return server.call_bounds(timeout)[1]

    async def call(self, name: str, arguments: dict[str, Any], timeout: float) -> ToolResult:
        server, tool = self._names[name]
        report = self.on_progress
        progress: ProgressFn | None = None
        if report is not None:
            def progress(done: float, total: float | None, message: str | None) -> None:
                report(name, done, total, message)
        return await server.call(tool, arguments, timeout, progress)


class McpToolServers:
    """The process's MCP tool servers: each started once, shared by the sessions that follow (the
    REPL's /new and /mode), and closed when the process is done with them."""

    def __init__(self, *, warn: Callable[[str], None] = lambda _m: None,
                 connect: Callable[[ServerSpec, float], Connection] = _connect,
                 ask_user: ElicitFn | None = None, log: Callable[[str], None] | None = None) -> None:
        self._log = log  # servers' log messages (tmg --debug); None: not shown
        self._ask_user = ask_user  # the REPL's form for a server's questions; None: declined (one-shot)
        self._warn = warn
        self._connect = connect
        self._servers: list[McpToolServer] = []

    def tools_for(self, config: Config, home: Path | None = None, *, ready_wait: float = READY_WAIT_S,
                  warn: Callable[[str], None] | None = None, cwd: Path | None = None) -> McpTools:
        """The ToolSource of `config`'s servers, reusing the running ones. Not started: call start().

        Each server is told its roots: the working folder `cwd` and the config's ROOTS."""
        say = warn or self._warn
        roots = mcp_roots(config, cwd)
        chosen = []
        for entry in offered_entries(config, say):
            errlog = home / f"mcp-{_UNSAFE.sub('_', entry.name)}.log" if home is not None else None
            spec = spec_from_config(entry, errlog, roots)
            server = next((s for s in self._servers if s.spec == spec and s.state != "closed"), None)
            if server is None:
                server = McpToolServer(spec, entry.timeout, self._connect, say)
                server.ask_user = self._ask_user
                if self._log is not None:
                    server.log = self._log
                self._servers.append(server)
            server.call_timeout, server.call_timeout_max = entry.call_timeout, entry.call_timeout_max
            server.set_warn(say)  # the latest session's: its transcript is the open one
            chosen.append(server)
        return McpTools(chosen, ready_wait)

    def describe(self) -> list[str]:
        """One line per server: its name, state and tool count (and why, when it is down)."""
        lines = []
        for server in self._servers:
            if server.state == "closed":
                continue
            count = len(server.tools)
            why = f" ({server.failure})" if server.failure and server.state != "ready" else ""
            lines.append(f"{server.name}: {server.state}{why}, {count} tool{'s' if count != 1 else ''}")
        return lines

    async def reconnect(self, name: str) -> str:
        """`/mcp reconnect NAME`: start the server afresh, whatever its state; one line saying how it went."""
        server = next((s for s in self._servers if s.name == name and s.state != "closed"), None)
        if server is None:
            known = ", ".join(s.name for s in self._servers if s.state != "closed") or "none"
            return f"no MCP tool server named {name} (servers: {known})"
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
        server = next((s for s in self._servers if _UNSAFE.sub("_", s.name) == server_name and s.state != "closed"),
                      None)
        if server is not None and server.state == "starting":  # asked for by name: worth its start
            server.start()
            await server.wait(server.start_timeout)
        if server is None or server.state != "ready":
            ready = ", ".join(s.name for s in self._servers if s.state == "ready") or "none"
            raise McpCallError(f"no ready MCP server named {server_name} (ready: {ready})")
        return await server.prompt(prompt, arg, f"/mcp__{server_name}__{prompt}")

    def start(self) -> None:
        """Start every server not started yet, in parallel (call on the event loop)."""
        for server in self._servers:
            server.start()

    async def aclose(self) -> None:
        """Stop every server without waiting for it to exit by itself."""
        servers, self._servers = self._servers, []
        await asyncio.gather(*(s.close() for s in servers))
