"""What a server asks of tmg while it is connected: the roots it may work in (roots/list), a log
message (shown under --debug), a form for the user (elicitation/create), an answer from the
session's model (sampling/createMessage), and word that its tool list changed.

A request that waits for a person (a form, a sampling consent) holds the calls to that server:
their silence is counted again from the answer (`McpConnection.call_tool`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from tmg.mcp.errors import SamplingDeclined
from tmg.mcp.spec import ServerSpec

# Asks the user to fill in a server's form (elicitation): (server, message, JSON schema of the
# fields) -> the answers, or None when the user declines.
ElicitFn = Callable[[str, str, dict[str, Any]], Awaitable["dict[str, Any] | None"]]
# Asks the session's model for a server (sampling): (server, the request's params in wire form)
# -> (the model's text, the model's name, why it stopped); raises SamplingDeclined with the reason.
SampleFn = Callable[[str, dict[str, Any]], Awaitable[tuple[str, str, str]]]


class ServerRequests:
    """The answers to a server's own requests, as a part of its connection (McpConnection)."""

    spec: ServerSpec
    elicit: ElicitFn | None  # None: a server's request for input is declined
    sample: SampleFn | None  # None: a server's sampling request is declined
    on_log: Callable[[str], None] | None  # a server's log messages (--debug), one line each
    tools_changed: bool  # notifications/tools/list_changed arrived since the last listing
    _asking: bool  # a person is being asked: calls wait for them
    _answered_at: float  # when the last form was answered: a call's silence counts from then

    async def _on_message(self, message: Any) -> None:
        """Server notifications the session surfaces (and transport exceptions, left to the call path)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.tools_changed = True

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
