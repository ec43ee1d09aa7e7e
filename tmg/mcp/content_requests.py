"""What a connection asks of its server beside tools: its prompts (prompts/list, prompts/get) and
its resources (resources/read, resources/list), each bounded, each failure the McpCallError it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from tmg.mcp.errors import request_failures
from tmg.mcp.listing import pages


class ServerContent:
    """The prompts and resources part of a connection (McpConnection)."""

    start_timeout: float
    _live_session: Callable[[], Any]
    _failures: Callable[[str], AbstractContextManager[None]]

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
