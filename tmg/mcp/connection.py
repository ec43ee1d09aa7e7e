"""One live MCP server connection: start, list tools, bounded calls, quick close.

A background task owns the SDK contexts (its task groups must be entered and exited by one
task), so `start()` and `close()` may be called from anywhere on the same event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

from tmg.mcp.outcome import (McpCallError, McpCallFailed, McpCallTimeout, McpSessionLost, McpStartError,
                                     McpStartTimeout, SamplingDeclined, ToolOutcome, ToolSpec)
from tmg.mcp.result_content import tool_outcome
from tmg.mcp.spec import ServerSpec
from tmg import media

if TYPE_CHECKING:
    from tmg.mcp.oauth import OAuthStore, ShowLogin

DEFAULT_CALL_TIMEOUT_S = 3.0
# Asks the user to fill in a server's form (elicitation): (server, message, JSON schema of the
# fields) -> the answers, or None when the user declines.
ElicitFn = Callable[[str, str, dict[str, Any]], Awaitable["dict[str, Any] | None"]]
# Asks the session's model for a server (sampling): (server, the request's params in wire form)
# -> (the model's text, the model's name, why it stopped); raises SamplingDeclined with the reason.
SampleFn = Callable[[str, dict[str, Any]], Awaitable[tuple[str, str, str]]]
# What a progress notification reports: progress, total (when known), a message (when sent).
ProgressFn = Callable[[float, "float | None", "str | None"], None]
DEFAULT_START_TIMEOUT_S = 15.0
# Extra time on top of the SDK's own read timeout before we give up on a call ourselves.
_CALL_SLACK_S = 0.5
# Bounds, not waits: how long a ready connection may take to wind down once told to close (the
# transport stops its child in well under a second), and how long a cancelled owner may take to
# finish (it kills the child on the way out). A start never waited for: it is cancelled at once.
_CLOSE_WAIT_S = 2.0


class McpConnection:
    """A started MCP server. Use `async with McpConnection(spec) as conn:` or start()/close()."""

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

    async def refresh_tools(self) -> None:
        """List the tools again (after notifications/tools/list_changed), bounded by the start timeout.

        Raises:
            McpCallError: the listing failed; the tools listed before stay.
        """
        session = self._live_session()
        self.tools_changed = False  # a change announced while listing is listed again next time
        try:
            async with asyncio.timeout(self.start_timeout):
                self._tools = await _list_all_tools(session)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            raise McpCallError(f"{self.spec.name}: tools/list: {describe_error(exc)}") from exc

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
        except McpCallError:
            raise
        except BaseException as exc:  # the SDK raises MCPError, anyio errors, ExceptionGroups
            if is_timeout(exc) and self.is_open:
                raise McpCallTimeout(f"{self.spec.name}.{name}: {describe_error(exc)}") from exc
            if is_session_lost(exc):  # the owner reconnects: a new session over a new transport
                raise McpSessionLost(f"{self.spec.name}.{name}: {describe_error(exc)}") from exc
            if self.is_open and is_error_answer(exc):  # this call failed; the connection stands
                raise McpCallFailed(f"{self.spec.name}.{name}: {describe_error(exc)}",
                                    reason=answer_reason(exc)) from exc
            raise McpCallError(f"{self.spec.name}.{name}: {describe_error(exc)}") from exc
        mismatch = None if result.is_error else await _output_mismatch(session, name, result)
        return _normalize(result, mismatch)

    async def prompt_arguments(self, name: str) -> list[tuple[str, bool]] | None:
        """(argument, required) of prompt `name` as the server lists it; None when it has no such prompt."""
        session = self._live_session()
        try:
            listed = await asyncio.wait_for(session.list_prompts(), self.start_timeout)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise McpCallError(f"{self.spec.name}: prompts/list: {describe_error(exc)}") from exc
        for prompt in listed.prompts:
            if prompt.name == name:
                return [(a.name, bool(a.required)) for a in prompt.arguments or ()]
        return None

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        """prompts/get: the prompt's messages as one text (their text parts, in order)."""
        session = self._live_session()
        try:
            result = await asyncio.wait_for(session.get_prompt(name, arguments), self.start_timeout)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise McpCallError(f"{self.spec.name}: prompts/get {name}: {describe_error(exc)}") from exc
        texts = [getattr(m.content, "text", None) for m in result.messages]
        return "\n\n".join(t for t in texts if t)

    async def read_resource(self, uri: str, timeout: float) -> dict[str, Any]:
        """resources/read, bounded by `timeout` seconds: the result in its wire form ({"contents": [...]}).

        Raises McpCallError (McpCallFailed when the server answered with an error) with the reason."""
        session = self._live_session()
        try:
            result = await asyncio.wait_for(session.read_resource(uri), timeout)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                raise
            if is_timeout(exc):
                raise McpCallTimeout(f"no answer within {timeout:g} s") from exc
            if is_error_answer(exc):
                reason = answer_reason(exc)
                raise McpCallFailed(reason, reason=reason) from exc
            raise McpCallError(describe_error(exc)) from exc
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def list_resource_uris(self, timeout: float) -> list[str]:
        """resources/list (all pages), bounded by `timeout` seconds: the URIs, in the server's order."""
        session = self._live_session()
        uris: list[str] = []
        try:
            async with asyncio.timeout(timeout):
                async for listed in _pages(session.list_resources):
                    uris.extend(str(r.uri) for r in listed.resources)
            return uris
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise McpCallError(f"{self.spec.name}: resources/list: {describe_error(exc)}") from exc

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
                    self._tools = await _list_all_tools(session)
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
                elif self._oauth and _oauth_failure(exc):
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

    async def _on_message(self, message: Any) -> None:
        """Server notifications the session surfaces (and transport exceptions, left to the call path)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.tools_changed = True

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
            quick_stdio_transport(spec.command, spec.args, spec.env, spec.cwd, errlog)
        )
        return read, write, errlog


    async def _list_roots(self, _context: Any) -> Any:
        """roots/list: the folders of the spec, as file:// URIs."""
        from pathlib import Path

        from mcp_types import ListRootsResult, Root

        return ListRootsResult(roots=[Root(uri=Path(folder).as_uri(), name=Path(folder).name or folder)
                                      for folder in self.spec.roots])

    async def _on_log_message(self, params: Any) -> None:
        """notifications/message: one line to `on_log` (tmg --debug), never to the user otherwise."""
        if self.on_log is None:
            return
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        where = f" {params.logger}" if getattr(params, "logger", None) else ""
        self.on_log(f"MCP server {self.spec.name}{where} [{params.level}]: {' '.join(data.split())[:500]}")

    @contextlib.contextmanager
    def _person_asked(self) -> Iterator[None]:
        """While a server's request waits for the user, calls to it wait too; their silence
        counts again from the answer."""
        self._asking = True
        try:
            yield
        finally:
            self._asking = False
            self._answered_at = asyncio.get_running_loop().time()

    async def _on_elicit(self, _context: Any, params: Any) -> Any:
        """elicitation/create: a form is put to the user (when there is one to ask); a URL is declined."""
        from mcp_types import ElicitResult

        schema = getattr(params, "requested_schema", None)
        if self.elicit is None or getattr(params, "mode", "form") != "form" or not isinstance(schema, dict):
            return ElicitResult(action="decline")
        with self._person_asked():
            answers = await self.elicit(self.spec.name, str(params.message), schema)
        if answers is None:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=answers)

    async def _on_sample(self, _context: Any, params: Any) -> Any:
        """sampling/createMessage: the session's model answers, when the permission engine allows it.

        The call that led to it waits meanwhile as it does for a form: a person may be asked."""
        from mcp_types import CreateMessageResult, ErrorData, TextContent

        if self.sample is None:
            return ErrorData(code=-1, message="the client declined the sampling request (no session to ask)")
        try:
            with self._person_asked():
                text, model, stop = await self.sample(
                    self.spec.name, params.model_dump(mode="json", by_alias=True, exclude_none=True))
        except SamplingDeclined as exc:
            return ErrorData(code=-1, message=str(exc))
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=text), model=model,
                                   stop_reason=stop)

    async def _note_refusal(self, response: Any) -> None:
        """The SDK turns a 401 or 403 into "Server returned an error response": keep the status."""
        from tmg.mcp.oauth import has_oauth_challenge

        if response.status_code in (401, 403):
            self._http_refusal = response.status_code
        if has_oauth_challenge(response):
            self._oauth_challenged = True

    def _wants_oauth_login(self) -> bool:
        """The server asked for an OAuth login, and this connection has not tried one yet."""
        return self._oauth_challenged and not self._oauth and self._can_oauth()

    def _can_oauth(self) -> bool:
        """OAuth is for URL servers not given credentials of their own in HEADERS."""
        from tmg.mcp.oauth import sets_authorization

        return self.spec.url is not None and not sets_authorization(self.spec.headers)

    def _oauth_provider(self) -> Any:
        """The SDK's OAuth provider (httpx auth) when the server wants OAuth or a login is stored; else None."""
        if not self._can_oauth() or self.oauth_store is None:
            return None
        from tmg.mcp.oauth import provider

        assert self.oauth_store is not None and self.spec.url is not None
        if not self._oauth and not self.oauth_store.has_login(self.spec.url):
            return None
        self._oauth = True
        return provider(self.spec.name, self.spec.url, self.oauth_store, self.show_login,
                        on_person=self._waiting_on_person, on_login_needed=self._note_login_needed)

    def _waiting_on_person(self, waiting: bool) -> None:
        """A person is logging in: the start's clock stops meanwhile, and restarts once they are back."""
        clock = self._start_clock
        if clock is not None:
            clock.reschedule(None if waiting else asyncio.get_running_loop().time() + self.start_timeout)

    def _note_login_needed(self) -> None:
        self._login_needed = True

    def _login_line(self) -> str:
        name = self.spec.name
        stored = self.oauth_store is not None and self.spec.url is not None and self.oauth_store.has_login(self.spec.url)
        why = "its stored OAuth login was refused" if stored else "it needs an OAuth login"
        return f"{name}: {why}; log in with `tmg mcp login {name}`, or run tmg without a prompt"

    def _refusal_line(self) -> str:
        name, status = self.spec.name, self._http_refusal
        where = f"MCP_SERVERS.{name}.HEADERS"
        if status == 403:
            return f"{name}: the server answered 403 Forbidden: the credentials in {where} are not allowed in"
        if self.spec.headers:
            return f"{name}: the server answered 401 Unauthorized: check the token in {where}"
        return (f"{name}: the server answered 401 Unauthorized: it needs credentials; set {where} "
                f"(e.g. Authorization: \"Bearer ${{{_env_name(name)}_TOKEN}}\")")


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside the ExceptionGroups anyio wraps failures in (or `exc` itself)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _oauth_failure(exc: BaseException) -> bool:
    """The SDK's OAuth flow failed (discovery, registration, the code exchange, the login itself)."""
    from mcp.client.auth import OAuthFlowError

    exc = _leaf(exc)
    return isinstance(exc, OAuthFlowError)


def _env_name(server: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in server).upper()


def import_sdk() -> None:
    """Import the parts of the mcp SDK a connection uses (idempotent; cheap once done)."""
    import mcp.client.session  # noqa: F401
    import mcp.shared.message  # noqa: F401
    import mcp_types  # noqa: F401


async def _pages(list_page: Any) -> Any:
    """Each page of a paginated list request (`session.list_tools`, `session.list_resources`),
    following the server's cursors."""
    from mcp_types import PaginatedRequestParams

    cursor: str | None = None
    while True:
        listed = await list_page(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        yield listed
        cursor = listed.next_cursor
        if not cursor:
            return


async def _list_all_tools(session: Any) -> dict[str, ToolSpec]:
    """tools/list, every page."""
    tools: dict[str, ToolSpec] = {}
    async for listed in _pages(session.list_tools):
        for tool in listed.tools:
            execution = getattr(tool, "execution", None)
            if getattr(execution, "task_support", None) == "required":
                continue  # callable only as a task, which tmg does not run: every call would fail
            annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
            tools[tool.name] = ToolSpec(
                tool.name, dict(tool.input_schema or {}), tool.description or "", annotations
            )
    return tools


async def _output_mismatch(session: Any, name: str, result: Any) -> str | None:
    """Why the result's structured content misses the tool's declared outputSchema, or None.

    One short reason (the validator's message), never the schema: the result is used anyway.
    """
    try:
        await session.validate_tool_result(name, result)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - RuntimeError from the SDK, or a listing that failed
        reason = getattr(exc.__cause__, "message", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        return media.scrub_base64(str(reason))[:200]
    return None


def _normalize(result: Any, mismatch: str | None = None) -> ToolOutcome:
    """CallToolResult -> ToolOutcome, read in its wire form (result_content.py: one reading for
    the SDK's results and the broker's)."""
    return tool_outcome(result.model_dump(mode="json", by_alias=True, exclude_none=True), mismatch)


_REQUEST_TIMEOUT = -32001  # the SDK's MCPError code for a read timeout (it cancels the request)
_CONNECTION_CLOSED = -32000  # the SDK's MCPError code when the connection went away


def answer_reason(exc: BaseException) -> str:
    """What the server's error answer said, for the model: 'Unknown tool: x (JSON-RPC error -32602)'."""
    exc = _leaf(exc)
    code = getattr(exc, "code", None)
    if isinstance(code, int) and getattr(exc, "error", None) is not None:
        message = str(getattr(exc, "message", "") or "")
        message = message.removeprefix(f"MCP error {code}: ")  # TypeScript servers say the code twice
        return f"{message or 'no message'} (JSON-RPC error {code})"
    return f"the result does not parse ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"


def is_error_answer(exc: BaseException) -> bool:
    """True when the server answered (a JSON-RPC error, or a result that does not parse): the
    connection is fine. A closed connection or a transport error is not an answer."""
    exc = _leaf(exc)
    code = getattr(exc, "code", None)
    if isinstance(code, int) and getattr(exc, "error", None) is not None:  # MCPError
        return code not in (_CONNECTION_CLOSED, _REQUEST_TIMEOUT)
    from pydantic import ValidationError  # the SDK's own dependency, already imported with it

    return isinstance(exc, ValidationError)


def is_timeout(exc: BaseException) -> bool:
    exc = _leaf(exc)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return True
    code = getattr(exc, "code", None)
    if code is None:
        code = getattr(getattr(exc, "error", None), "code", None)
    return code == _REQUEST_TIMEOUT


_INVALID_REQUEST = -32600


def is_session_lost(exc: BaseException) -> bool:
    """An HTTP 404 to a request of a known session, as the SDK spells it ("Session terminated") or
    as the server's own error body says it ("Session not found")."""
    exc = _leaf(exc)
    error = getattr(exc, "error", None)
    return getattr(error, "code", None) == _INVALID_REQUEST and \
        getattr(error, "message", "") in ("Session terminated", "Session not found")


def describe_error(exc: BaseException) -> str:
    """A one-line reason, unwrapping the ExceptionGroups anyio wraps start-up failures in."""
    exc = _leaf(exc)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timed out"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
