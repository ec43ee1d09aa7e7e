"""What a server asks of tmg while it is connected: the roots it may work in (roots/list), a log
message (shown under --debug), a form for the user or a page for them to open (elicitation/create,
form and URL modes), an answer from the session's model (sampling/createMessage), and word that
its tool list changed.

The answers are made in wire form (JSON-RPC params in, a result out), once for every connection:
McpConnection adapts the SDK's typed callbacks to them, and a WARM server's connection through
the broker (tmg.broker.client_traffic) takes them as the broker passes them on.

A request that waits for a person (a form, a sampling consent) holds the calls to that server:
their silence is counted again from the answer (tmg.mcp.call_clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tmg.mcp.errors import SamplingDeclined
from tmg.mcp.spec import ServerSpec

# Asks the user to fill in a server's form (elicitation): (server, message, JSON schema of the
# fields) -> the answers, or None when the user declines.
ElicitFn = Callable[[str, str, dict[str, Any]], Awaitable["dict[str, Any] | None"]]
# Asks the user to open a server's page themselves (URL-mode elicitation): (server, message, URL)
# -> True when they will (tmg never opens it), False when they decline.
ElicitUrlFn = Callable[[str, str, str], Awaitable[bool]]
# Asks the session's model for a server (sampling): (server, the request's params in wire form)
# -> (the model's text, the model's name, why it stopped); raises SamplingDeclined with the reason.
SampleFn = Callable[[str, dict[str, Any]], Awaitable[tuple[str, str, str]]]


class ServerRequests:
    """The answers to a server's own requests, as a part of its connection."""

    spec: ServerSpec
    elicit: ElicitFn | None  # None: a server's request for input is declined
    elicit_url: ElicitUrlFn | None  # None: a server's page to open is declined
    sample: SampleFn | None  # None: a server's sampling request is declined
    on_log: Callable[[str], None] | None  # a server's log messages (--debug), one line each
    tools_changed: bool  # notifications/tools/list_changed arrived since the last listing
    _asking: bool  # a person is being asked: calls wait for them
    _answered_at: float  # when the last form was answered: a call's silence counts from then

    # -- in wire form ---------------------------------------------------------------------
    def roots(self) -> dict[str, Any]:
        """roots/list: the folders of the spec, as file:// URIs."""
        return {"roots": [{"uri": Path(folder).as_uri(), "name": Path(folder).name or folder}
                          for folder in self.spec.roots]}

    async def elicitation(self, params: dict[str, Any]) -> dict[str, Any]:
        """elicitation/create: a form put to the user, or a page shown for them to open (when there
        is someone to ask); a URL that is not http(s) is declined unseen."""
        if params.get("mode") == "url":
            url = str(params.get("url") or "")
            if self.elicit_url is None or urlsplit(url).scheme.lower() not in ("http", "https"):
                return {"action": "decline"}
            with self._person_asked():
                opened = await self.elicit_url(self.spec.name, str(params.get("message") or ""), url)
            return {"action": "accept" if opened else "decline"}
        schema = params.get("requestedSchema")
        if self.elicit is None or not isinstance(schema, dict):
            return {"action": "decline"}
        with self._person_asked():
            answers = await self.elicit(self.spec.name, str(params.get("message") or ""), schema)
        return {"action": "decline"} if answers is None else {"action": "accept", "content": answers}

    async def sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        """sampling/createMessage: the session's model answers, when the permission engine allows it
        (raises SamplingDeclined with the reason). The call that led to it waits meanwhile as it
        does for a form: a person may be asked."""
        if self.sample is None:
            raise SamplingDeclined("the client declined the sampling request (no session to ask)")
        with self._person_asked():
            text, model, stop = await self.sample(self.spec.name, params)
        return {"role": "assistant", "content": {"type": "text", "text": text}, "model": model, "stopReason": stop}

    def notified(self, method: str, params: dict[str, Any]) -> None:
        """A notification: its tool list changed, or a log message (one line to `on_log`, tmg --debug)."""
        if method == "notifications/tools/list_changed":
            self.tools_changed = True
        elif method == "notifications/message" and self.on_log is not None:
            data = params.get("data")
            text = data if isinstance(data, str) else json.dumps(data, default=str)
            where = f" {params['logger']}" if params.get("logger") else ""
            self.on_log(f"MCP server {self.spec.name}{where} [{params.get('level')}]: {' '.join(text.split())[:500]}")

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

    # -- the SDK's callbacks (McpConnection) ----------------------------------------------
    async def _on_message(self, message: Any) -> None:
        """Server notifications the session surfaces (and transport exceptions, left to the call path)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.notified("notifications/tools/list_changed", {})

    async def _list_roots(self, _context: Any) -> Any:
        from mcp_types import ListRootsResult

        return ListRootsResult.model_validate(self.roots())

    async def _on_log_message(self, params: Any) -> None:
        self.notified("notifications/message", _wire(params))

    async def _on_elicit(self, _context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult

        return ElicitResult.model_validate(await self.elicitation(_wire(params)))

    async def _on_sample(self, _context: Any, params: Any) -> Any:
        from mcp_types import CreateMessageResult, ErrorData

        try:
            return CreateMessageResult.model_validate(await self.sampling(_wire(params)))
        except SamplingDeclined as exc:
            return ErrorData(code=-1, message=str(exc))


def _wire(params: Any) -> dict[str, Any]:
    """SDK params in their wire form (camelCase keys)."""
    return params.model_dump(mode="json", by_alias=True, exclude_none=True)
