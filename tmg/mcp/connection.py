"""One live MCP server connection: start, list tools, bounded calls, quick close.

A background task owns the SDK contexts (its task groups must be entered and exited by one
task), so `start()` and `close()` may be called from anywhere on the same event loop. What the
server asks of tmg meanwhile is callbacks.py's; a URL server's credentials are http_auth.py's; what
a failure means is errors.py's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, ContextManager

from tmg.mcp.callbacks import ElicitFn, SampleFn, ServerRequests
from tmg.mcp.errors import (McpCallError, McpCallTimeout, McpStartError, McpStartTimeout, describe_error,
                            is_timeout, request_failures)
from tmg.mcp.http_auth import UrlServerAuth, oauth_failure
from tmg.mcp.listing import list_all_tools, pages
from tmg.mcp.outcome import ToolOutcome, ToolSpec
from tmg.mcp.result_content import output_mismatch, sdk_outcome
from tmg.mcp.spec import ServerSpec

if TYPE_CHECKING:
    from tmg.mcp.oauth import OAuthStore, ShowLogin

DEFAULT_CALL_TIMEOUT_S = 3.0
# What a progress notification reports: progress, total (when known), a message (when sent).
ProgressFn = Callable[[float, "float | None", "str | None"], None]
DEFAULT_START_TIMEOUT_S = 15.0
# Extra time on top of the SDK's own read timeout before we give up on a call ourselves.
_CALL_SLACK_S = 0.5
# Bounds, not waits: how long a ready connection may take to wind down once told to close (the
# transport stops its child in well under a second), and how long a cancelled owner may take to
# finish (it kills the child on the way out). A start never waited for: it is cancelled at once.
_CLOSE_WAIT_S = 2.0


class McpConnection(ServerRequests, UrlServerAuth):
    """A started MCP server. Use `async with McpConnection(spec) as conn:` or start()/close().

    It is the tool servers' Connection (tmg.mcp.tool_server) with every optional member."""

    restartable = True  # restart(): a new session over a new transport

    def __init__(
        self,
        spec: ServerSpec,
        *,
        start_timeout: float = DEFAULT_START_TIMEOUT_S,
        client_name: str = "tmg",
    ) -> None:
        self.spec = spec
        self.start_timeout = start_timeout
        self.client_name = client_name
        self._tools: dict[str, ToolSpec] = {}
        self._session: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None
        self._ready = False  # initialize and tools/list answered: the owner is idle until told to close
        # Set by the server's notifications/tools/list_changed; the owner of the tool list
        # refreshes it (refresh_tools) at a phase boundary, never in the middle of a turn.
        self.tools_changed = False
        self.elicit: ElicitFn | None = None  # None: a server's request for input is declined
        self.sample: SampleFn | None = None  # None: a server's sampling request is declined
        self.on_log: Callable[[str], None] | None = None  # a server's log messages (--debug), one line each
        self._asking = False  # a person is being asked (a form, a sampling consent): calls wait for them
        self._answered_at = float("-inf")  # when the last form was answered: a call's silence counts from then
        self._http_refusal: int | None = None  # 401/403 from a URL server: said as such, not "an error response"
        # OAuth (oauth.py): where logins are kept (None: never OAuth), who is shown where to log in
        # (None: nobody, a one-shot), and what this connection learnt of it.
        self.oauth_store: OAuthStore | None = None
        self.show_login: ShowLogin | None = None
        self._oauth = False  # the server wants OAuth: requests go through the SDK's OAuth provider
        self._oauth_challenged = False  # a 401 asked for an OAuth login (RFC 9728 resource_metadata)
        self._login_needed = False  # a login was needed and nobody could give it
        self._start_clock: asyncio.Timeout | None = None
        self.instructions = ""  # what the server says about using it (initialize's `instructions`)
        self.server_name: str | None = None
        self.server_version: str | None = None

    @property
    def tools(self) -> dict[str, ToolSpec]:
        """The tools the server listed at start, by name."""
        return dict(self._tools)

    @property
    def tool_names(self) -> frozenset[str]:
        """Names of the tools the server listed at start."""
        return frozenset(self._tools)

    @property
    def is_open(self) -> bool:
        """True between a successful start() and close() (or the server going away)."""
        return self._session is not None and self._owner is not None and not self._owner.done()

    async def __aenter__(self) -> McpConnection:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the server, initialize, and list its tools.

        Raises:
            McpStartError: spawn, initialize or tools/list failed or timed out.
        """
        try:
            await self._start_once()
        except McpStartError:
            if not self._wants_oauth_login() or self.oauth_store is None or self.show_login is None:
                raise
            # The server asked for an OAuth login and someone is here to give it: start again
            # through the SDK's OAuth provider, which shows where to log in.
            self._reset()
            self._oauth = True
            await self._start_once()

    async def _start_once(self) -> None:
        if self._owner is not None:
            raise McpStartError(f"{self.spec.name}: already started")
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._closing = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp:{self.spec.name}")
        try:
            await ready
        except BaseException:
            if ready.cancelled():  # our caller gave up (close, Ctrl-C): stop the start at once
                await self._cancel_owner()
            else:  # the start failed: the owner has stopped the transport and is finishing
                await self._join_owner()
            raise

    def _live_session(self) -> Any:
        """The SDK session, while connected."""
        if not self.is_open:
            raise McpCallError(f"{self.spec.name}: not connected")
        return self._session

    def _failures(self, what: str) -> ContextManager[None]:
        """Whatever the request inside raises, as the McpCallError it is, named `<server>: <what>`."""
        return request_failures(f"{self.spec.name}: {what}", connected=lambda: self.is_open)

    async def refresh_tools(self) -> None:
        """List the tools again (after notifications/tools/list_changed), bounded by the start timeout.

        Raises:
            McpCallError: the listing failed; the tools listed before stay.
        """
        session = self._live_session()
        self.tools_changed = False  # a change announced while listing is listed again next time
        with self._failures("tools/list"):
            async with asyncio.timeout(self.start_timeout):
                self._tools = await list_all_tools(session)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], timeout: float = DEFAULT_CALL_TIMEOUT_S, *,
        max_timeout: float | None = None, on_progress: ProgressFn | None = None,
    ) -> ToolOutcome:
        """Call a tool, bounded by `timeout` seconds of silence.

        The request carries a progressToken; each progress notification is passed to
        `on_progress` and gives the call another `timeout` seconds, never past `max_timeout`
        seconds from its start. A call past its bound is cancelled (the SDK tells the server).

        Returns the normalized result, `is_error` included: the caller decides what an
        `isError` result means. Raises McpCallFailed when the server answered with a JSON-RPC
        error (the connection stands), McpCallTimeout when it did not answer in time, and
        McpCallError when the connection itself failed.
        """
        session = self._live_session()
        from mcp_types import CallToolRequest, CallToolRequestParams, CallToolResult

        # send_request rather than call_tool: the SDK's call_tool raises on a structured result
        # that misses the declared outputSchema, and the result's usable text is lost with it.
        request = CallToolRequest(params=CallToolRequestParams(name=name, arguments=arguments))
        limit = max(timeout, max_timeout or timeout)
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            nonlocal deadline
            deadline = min(started + limit, loop.time() + timeout)  # a sign of life buys more time
            if on_progress is not None:
                on_progress(progress, total, message)

        call = asyncio.ensure_future(session.send_request(
            request, CallToolResult, request_read_timeout_seconds=limit + _CALL_SLACK_S, progress_callback=progressed))
        try:
            with request_failures(f"{self.spec.name}.{name}", connected=lambda: self.is_open):
                while not call.done():
                    if self._asking:  # the server waits for the user, not the other way
                        await asyncio.wait({call}, timeout=0.2)
                        continue
                    deadline = max(deadline, min(started + limit, self._answered_at + timeout))
                    if loop.time() >= deadline:
                        break
                    await asyncio.wait({call}, timeout=deadline - loop.time())
                if not call.done():
                    call.cancel()  # the SDK sends notifications/cancelled on its way out
                    await asyncio.wait({call}, timeout=_CLOSE_WAIT_S)
                    raise McpCallTimeout(f"{self.spec.name}.{name}: timed out",
                                         at_limit=loop.time() >= started + limit)
                result = call.result()
        except asyncio.CancelledError:
            call.cancel()
            raise
        mismatch = None if result.is_error else await output_mismatch(session, name, result)
        return sdk_outcome(result, mismatch)

    async def prompt_arguments(self, name: str) -> list[tuple[str, bool]] | None:
        """(argument, required) of prompt `name` as the server lists it; None when it has no such prompt."""
        session = self._live_session()
        with self._failures("prompts/list"):
            listed = await asyncio.wait_for(session.list_prompts(), self.start_timeout)
        for prompt in listed.prompts:
            if prompt.name == name:
                return [(a.name, bool(a.required)) for a in prompt.arguments or ()]
        return None

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        """prompts/get: the prompt's messages as one text (their text parts, in order)."""
        session = self._live_session()
        with self._failures(f"prompts/get {name}"):
            result = await asyncio.wait_for(session.get_prompt(name, arguments), self.start_timeout)
        texts = [getattr(m.content, "text", None) for m in result.messages]
        return "\n\n".join(t for t in texts if t)

    async def read_resource(self, uri: str, timeout: float) -> dict[str, Any]:
        """resources/read, bounded by `timeout` seconds: the result in its wire form ({"contents": [...]}).

        Raises McpCallError (McpCallFailed when the server answered with an error) with the reason."""
        session = self._live_session()
        with request_failures("", bound=timeout):  # the caller names the server and the resource
            result = await asyncio.wait_for(session.read_resource(uri), timeout)
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def list_resource_uris(self, timeout: float) -> list[str]:
        """resources/list (all pages), bounded by `timeout` seconds: the URIs, in the server's order."""
        session = self._live_session()
        uris: list[str] = []
        with self._failures("resources/list"):
            async with asyncio.timeout(timeout):
                async for listed in pages(session.list_resources):
                    uris.extend(str(r.uri) for r in listed.resources)
        return uris

    async def restart(self) -> None:
        """Close what is left of the connection and start it afresh: a new session (initialize,
        tools/list) over a new transport. How a lost HTTP session or dropped connection is healed.

        Raises:
            McpStartError: as start() does.
        """
        await self.close()
        self._reset()
        await self.start()

    def _reset(self) -> None:
        """Forget a finished start (the next one begins afresh; a server found to want OAuth keeps it)."""
        self._owner = None
        self._closing = None
        self._ready = False
        self._tools = {}
        self.tools_changed = False  # the new session's tools/list is the current list
        self._http_refusal = None
        self._oauth_challenged = False
        self._login_needed = False

    async def close(self) -> None:
        """Stop the server without waiting for it to exit on its own (see `stdio.py`).

        A server that never became ready (hung or slow in initialize) is not waited for at all:
        the start is cancelled, which kills its process group on the way out.
        """
        if not self._ready:
            await self._cancel_owner()
        else:
            if self._closing is not None:
                self._closing.set()
            await self._join_owner()
        self._session = None

    async def _join_owner(self) -> None:
        """Let the owner finish by itself (bounded); cancel it if it does not."""
        owner = self._owner
        if owner is None or owner.done():
            return
        done, _ = await asyncio.wait({owner}, timeout=_CLOSE_WAIT_S)
        if not done:
            await self._cancel_owner()

    async def _cancel_owner(self) -> None:
        """Cancel the owner now and give it a bounded moment to stop the transport (and its child)."""
        owner = self._owner
        if owner is None or owner.done():
            return
        owner.cancel()
        await asyncio.wait({owner}, timeout=_CLOSE_WAIT_S)
        if owner.done() and not owner.cancelled():
            owner.exception()  # retrieved: closing must not raise, nor log "never retrieved"

    async def _own(self, ready: asyncio.Future[None]) -> None:
        """Owns the transport and session contexts for the connection's whole life."""
        assert self._closing is not None
        errlog: Any = None
        step = "the start"  # what the server was asked last, to name in a timeout
        try:
            async with AsyncExitStack() as stack:
                read, write, errlog = await self._open_transport(stack)
                # The server is starting meanwhile; the SDK's import (most of a second of CPU)
                # runs off the loop, so a prompt being drawn or a turn being refined goes on.
                await asyncio.to_thread(import_sdk)
                from mcp import ClientSession  # lazy: tmg's fast paths never import mcp
                from mcp_types import Implementation

                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        read_timeout_seconds=self.start_timeout,
                        client_info=Implementation(name=self.client_name, version="0"),
                        message_handler=self._on_message,
                        # Roots are advertised only when there are some: a server then works in them.
                        list_roots_callback=self._list_roots if self.spec.roots else None,
                        elicitation_callback=self._on_elicit,
                        # Sampling is advertised only when the config enables it (SAMPLING: true).
                        sampling_callback=self._on_sample if self.spec.sampling else None,
                        logging_callback=self._on_log_message,
                    )
                )
                async with asyncio.timeout(self.start_timeout) as self._start_clock:
                    step = "initialize"
                    init = await session.initialize()
                    step = "tools/list"
                    self._tools = await list_all_tools(session)
                info = getattr(init, "server_info", None)
                self.server_name = getattr(info, "name", None)
                self.server_version = getattr(info, "version", None)
                self.instructions = getattr(init, "instructions", None) or ""
                self._session = session
                self._ready = True
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                if self._login_needed or self._wants_oauth_login():
                    ready.set_exception(McpStartError(self._login_line()))
                elif self._oauth and oauth_failure(exc):
                    ready.set_exception(McpStartError(
                        f"{self.spec.name}: the OAuth login failed ({describe_error(exc)}); try again with "
                        f"`tmg mcp login {self.spec.name}` (in the REPL: /mcp reconnect {self.spec.name})"))
                elif self._http_refusal is not None:
                    ready.set_exception(McpStartError(self._refusal_line()))
                elif is_timeout(exc):  # the clock or the SDK's read timeout: the same verdict
                    ready.set_exception(McpStartTimeout(
                        f"{self.spec.name}: no answer to {step} within {self.start_timeout:g} s"))
                else:
                    ready.set_exception(McpStartError(f"{self.spec.name}: {describe_error(exc)}"))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._session = None
            if errlog is not None and hasattr(errlog, "close"):
                errlog.close()

    async def _open_transport(self, stack: AsyncExitStack) -> tuple[Any, Any, Any]:
        spec = self.spec
        if spec.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = await stack.enter_async_context(create_mcp_http_client(
                headers=dict(spec.headers) if spec.headers else None, auth=self._oauth_provider()))
            client.event_hooks["response"].append(self._note_refusal)
            streams = await stack.enter_async_context(streamable_http_client(spec.url, http_client=client))
            return streams[0], streams[1], None
        from tmg.mcp.stdio import open_errlog, quick_stdio_transport

        assert spec.command is not None
        errlog = open_errlog(spec.errlog)
        read, write = await stack.enter_async_context(
            quick_stdio_transport(spec.command, spec.args, spec.env, spec.cwd, errlog, umask=spec.umask)
        )
        return read, write, errlog


def import_sdk() -> None:
    """Import the parts of the mcp SDK a connection uses (idempotent; cheap once done)."""
    import mcp.client.session  # noqa: F401
    import mcp.shared.message  # noqa: F401
    import mcp_types  # noqa: F401
