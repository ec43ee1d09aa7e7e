"""One MCP server whose tools are offered to the model: its start in the background (the lifecycle
is tmg.mcp.pool's, shared with the memory servers), how long a prompt waits for it, the tools it
listed when it last started (offered while it starts: a call waits for it), its calls, its
prompts and resources, and how it comes back when its connection drops.

A tool's `isError` result goes back to the model as an error result, and so do a JSON-RPC error
answer and a call past its timeout (the SDK cancels it): the server stays. A transport failure
(the connection closed or the server died) is an error result naming the server and one warning
to the user. A URL server is then reconnected: at once when it no longer knows the session (HTTP
404, the call is sent again), else in the background with backoff, bounded (reconnect.py),
its tools back from the next turn once it answers; a stdio server's tools are withdrawn for the
rest of the process. `/mcp reconnect NAME` starts any server afresh. A server that says its
tools changed is listed again at the next turn's start (`SessionServers.settle`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, ContextManager, Protocol
from urllib.parse import urlsplit

from tmg.mcp.errors import (URL_ELICITATION_REQUIRED, McpCallError, McpCallFailed, McpCallTimeout, McpLoginNeeded,
                            McpSessionLost, McpStartError, SamplingDeclined)
from tmg.mcp.outcome import ToolOutcome, ToolSpec
from tmg.mcp.pool import PooledServer
from tmg.mcp.prompts import fill_prompt
from tmg.mcp.reconnect import Reconnecting
from tmg.mcp.spec import ServerSpec
from tmg.mcp.start_times import StartTimes

if TYPE_CHECKING:
    from tmg.mcp.callbacks import ElicitFn, ElicitUrlFn, SampleFn
    from tmg.mcp.connection import ProgressFn
    from tmg.mcp.known_tools import KnownTools
    from tmg.mcp.oauth import OAuthStore, ShowLogin

READY_WAIT_S = 0.5  # the least a prompt waits for a server still starting
# The cold path (issue 15): a prompt waits for a server still starting as long as its remembered
# starts needed, times a factor plus a margin for a busier machine, within MAX_COLD_WAIT_S (and its
# TIMEOUT); a server never started here gets the bound. A ready server ends the wait at once.
COLD_WAIT_FACTOR = 3.0
COLD_WAIT_MARGIN_S = 1.0
MAX_COLD_WAIT_S = 10.0
# How a WARM server was reached (tmg.broker.launch's routes), as `/mcp` says it.
_WARMTH = {"warm broker": "warm (kept by the broker)",
           "cold start (broker started)": "warm (the broker started it now)",
           "cold start (direct spawn)": "warm wanted, but started directly (no broker could be had)"}


class Connection(Protocol):
    """A server's connection as a tool server uses it: McpConnection (tmg.mcp.connection), a WARM
    server's through the broker (tmg.broker.launch.WarmConnection), test fakes.

    Every connection has the first four members. The rest are optional: a connection without one
    subclasses this Protocol and takes its default (it takes no requests from its server, lists
    nothing more, offers no resources or prompts, and is not restarted here)."""

    @property
    def tools(self) -> dict[str, ToolSpec]: ...

    async def start(self) -> None: ...

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = ..., *,
                        max_timeout: float | None = None, on_progress: ProgressFn | None = None) -> ToolOutcome: ...

    async def close(self) -> None: ...

    # Where the server's own requests go, set before it starts (None: declined, or not shown).
    elicit: ElicitFn | None = None
    elicit_url: ElicitUrlFn | None = None
    sample: SampleFn | None = None
    on_log: Callable[[str], None] | None = None
    oauth_store: OAuthStore | None = None
    show_login: ShowLogin | None = None
    tools_changed: bool = False  # the server said its tool list changed since it was listed
    instructions: str = ""  # what the server says about using it (initialize's `instructions`)
    restartable: bool = False  # restart() starts it afresh; else whoever keeps it does (the broker)

    async def refresh_tools(self) -> None:
        """List the tools again (after `tools_changed`); raises McpCallError when listing fails."""

    async def restart(self) -> None:
        """A new session over a new transport (called only when `restartable`)."""
        raise McpStartError("this connection is not restarted by tmg")

    async def read_resource(self, uri: str, timeout: float) -> dict[str, Any]:
        """resources/read, in wire form; raises McpCallError (McpCallFailed: the server's error answer)."""
        raise McpCallError("this server's connection does not read resources")

    async def list_resource_uris(self, timeout: float) -> list[str]:
        """resources/list: the URIs ([] when there are none)."""
        return []

    async def prompt_arguments(self, name: str) -> list[tuple[str, bool]] | None:
        """(argument, required) of a prompt; None when there is no such prompt."""
        raise McpCallError("this server's connection does not offer prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        """prompts/get, as one text."""
        raise McpCallError("this server's connection does not offer prompts")


class McpToolServer(PooledServer, Reconnecting):
    """One server whose tools are offered: its start in the background (tmg.mcp.pool), its calls."""

    def __init__(self, spec: ServerSpec, start_timeout: float, connect: Callable[[ServerSpec, float], Connection],
                 warn: Callable[[str], None], *, warm: bool = False, times: StartTimes | None = None,
                 known: KnownTools | None = None) -> None:
        super().__init__(spec, start_timeout=start_timeout, connect=self._wired(connect), warn=warn)
        self.warm = warm  # kept warm by the broker (WARM: true)
        self._times = times
        self._known = known
        # What it listed when it last started here: offered while it starts (a call waits for it).
        self._remembered = known.tools(spec) if known is not None else None
        self.waited_for = False  # a prompt waits for its start (WAIT: true, TMG_MCP_WAIT)
        self._told_late = False
        self._told_mismatch: set[str] = set()
        self.log: Callable[[str], None] = lambda _line: None  # its log messages: shown under --debug
        self.ask_user: ElicitFn | None = None  # the REPL's form; None in a one-shot
        self.ask_url: ElicitUrlFn | None = None  # the REPL's question about a page to open; None in a one-shot
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
            conn.elicit = self._elicit  # a server's request for input: a form, or one line declining it
            conn.elicit_url = self._elicit_url  # a page to open: the user is asked, or one line declining it
            conn.on_log = lambda line: self.log(line)
            conn.sample = self._sample  # asked only when SAMPLING advertised it (connection.py)
            conn.oauth_store, conn.show_login = self.oauth_store, self.show_login  # a stored login, or a new one
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

    async def _elicit_url(self, server: str, message: str, url: str) -> bool:
        if self.ask_url is not None:
            with self.hold_screen():
                return await self.ask_url(server, message, url)
        from urllib.parse import urlsplit

        self._warn(f"MCP server {server} asked you to open a page on {urlsplit(url).hostname or '?'}; a one-shot "
                   "cannot ask you, so it was declined (run tmg without a prompt to answer such questions)")
        return False

    async def _pages_first(self, data: Any) -> ToolOutcome:
        """The server needs the user to open pages before the call can run (URL elicitation
        required): each is put to the user as a page to open (a one-shot declines in one line)."""
        pages = [p for p in (data or {}).get("elicitations") or [] if isinstance(p, dict) and p.get("mode") == "url"
                 and str(p.get("url", "")).lower().startswith(("https://", "http://"))]
        hosts = ", ".join(sorted({urlsplit(str(p["url"])).hostname or "?" for p in pages})) or "no usable page"
        shown = [await self._elicit_url(self.name, str(p.get("message") or ""), str(p["url"])) for p in pages]
        if shown and all(shown):
            return _error(f"{self.name} needs the user to finish on a page first ({hosts}); they were shown it: "
                          "call the tool again once they say it is done")
        return _error(f"{self.name} needs the user to open a page first ({hosts}); they did not")

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
        self._remember_tools()

    def _remember_tools(self) -> None:
        if self._known is not None and self.spec is not None and self._conn is not None:
            self._known.record(self.spec, self._conn.tools, self._conn.instructions)

    @property
    def known_before(self) -> bool:
        """It listed its tools when it last started here: they are offered before it is ready."""
        return bool(self._remembered)

    def _failure(self, exc: Exception) -> str:
        return f"MCP server {self.name} did not start ({exc}); its tools are off for this session"

    @property
    def tools(self) -> dict[str, ToolSpec]:
        """Its tools when ready; while it starts (or before it is started), those it listed last time."""
        if self.state == "ready" and self._conn is not None:
            return self._conn.tools
        return dict(self._remembered[0]) if self.state == "starting" and self._remembered else {}

    @property
    def tools_changed(self) -> bool:
        """The server said its tool list changed (notifications/tools/list_changed) since it was listed."""
        return self.state == "ready" and self._conn.tools_changed

    async def refresh_tools(self) -> None:
        """List the tools again; a failed listing keeps the tools listed before, with one warning."""
        try:
            await self._conn.refresh_tools()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the old list stays usable
            self._warn(f"MCP server {self.name} changed its tools but listing them failed ({exc}); "
                       "the tools listed before stay")
            return
        self._remember_tools()

    @property
    def instructions(self) -> str:
        if self.state == "ready" and self._conn is not None:
            return self._conn.instructions
        return self._remembered[1] if self.state == "starting" and self._remembered else ""

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float,
                   on_progress: ProgressFn | None = None) -> ToolOutcome:
        """The call's outcome for the model: a failure of any kind is an error outcome whose text says
        what happened (never a raise); a transport failure reconnects or withdraws the server."""
        idle, most = self.call_bounds(timeout)
        if self.state == "starting":  # a remembered tool: the call waits for the start (begun now if need be)
            await self.finish_starting()
            if self.state == "failed":
                return _error(self.failure or f"MCP server {self.name} did not start")
        if self.state == "reconnecting" and not await self.reconnect():  # a call is a reason to try now
            return _error(f"MCP server {self.name} is unreachable ({self.failure}); tmg keeps trying "
                          "to reconnect, its tools come back when it answers")
        if self.state != "ready":
            return _error(f"MCP server {self.name} is not available; its tools are withdrawn")
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
                return _error(f"{self.name} was still working after {most:g} s, the most a call may "
                              "take (CALL_TIMEOUT_MAX); the call was cancelled (try something smaller)")
            return _error(f"{self.name} did not answer within {idle:g} s; the call was "
                          "cancelled (try something smaller, or another way)")
        except McpCallFailed as exc:  # a JSON-RPC error answer: this call failed, the server stands
            if exc.code == URL_ELICITATION_REQUIRED:
                return await self._pages_first(exc.data)
            return _error(f"{self.name} answered with an error: {exc.reason}")
        except McpLoginNeeded as exc:  # nobody here to log in again: said in full once, the server stands
            self._warn(str(exc))
            return _error(str(exc))
        except Exception as exc:  # McpCallError above all: a crash, a closed pipe, a protocol error
            reason = str(exc) if isinstance(exc, McpCallError) else f"{type(exc).__name__}: {exc}"
            if self.spec is not None and self.spec.url is not None:
                if await self.recover(reason):
                    return _error(f"MCP server {self.name} lost its connection ({reason}) and was "
                                  "reconnected; the call may not have run: call it again if it should")
                return _error(f"MCP server {self.name} lost its connection ({reason}); the call may "
                              "not have run; tmg is reconnecting, its tools come back when it answers")
            self.withdraw(reason)
            return _error(f"MCP server {self.name} failed ({reason}); its tools are withdrawn "
                          "for this session")
        if outcome.mismatch and tool not in self._told_mismatch:  # the text is used; said once per tool
            self._told_mismatch.add(tool)
            self._warn(f"MCP server {self.name}: {tool} returned structured content that does not match its "
                       f"declared outputSchema ({outcome.mismatch}); its text is used")
        if outcome.is_error:  # the tool's own failure (isError): the model is told it is one
            return _error(f"{outcome.text or 'the tool reported an error'}")
        return outcome

    async def prompt(self, prompt: str, arg: str, command: str) -> str:
        """The server's prompt `prompt` filled in from `arg` (tmg.mcp.prompts), as one text.
        Raises McpCallError with a line for the user."""
        return await fill_prompt(self._conn, self.name, prompt, arg, command)

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
        try:
            return await self._conn.read_resource(uri, self.call_bounds(timeout)[0])
        except McpCallFailed as exc:
            raise McpCallError(f"{self.name} answered: {exc.reason}") from exc

    async def resource_uris(self, timeout: float) -> list[str]:
        """The server's resource URIs (resources/list), listed once and kept: for Tab completion.
        [] when the server is not ready, lists none, or cannot list them in `timeout` seconds. A
        Tab while the server starts waits for its start (completion does not hold up typing); a
        list that timed out is asked again at the next Tab, not taken for "no resources"."""
        if self.state == "starting":
            await self.wait(max(timeout, self.start_timeout))
        if self._uris is None and self.state == "ready":
            try:
                self._uris = await self._conn.list_resource_uris(timeout)
            except McpCallTimeout:
                return []  # slow, not empty: the next Tab asks again
            except McpCallError:
                self._uris = []  # a server without resources: not asked again
        return self._uris or []

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


def _error(text: str) -> ToolOutcome:
    """A call that failed, as the model is told it (the server's own isError result included)."""
    return ToolOutcome(is_error=True, text=f"error: {text}")
