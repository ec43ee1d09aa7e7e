"""What a tmg client asks a WARM server through the broker beside tools: its resources
(resources/read, resources/list) and its prompts (prompts/list, prompts/get), in wire form, each
bounded; the broker passes them on as they are (relay.FORWARDED). As tmg.mcp.content_requests
does for a direct connection, with the same answers.
"""

from __future__ import annotations

import asyncio
from typing import Any


class ServerContent:
    """The resources and prompts part of a connection through the broker (BrokerConnection)."""

    start_timeout: float

    async def _asked(self, method: str, params: dict[str, Any], timeout: float, label: str) -> Any:
        """One request, bounded: McpCallFailed for the server's error answer (the connection
        stands), McpCallError when it did not answer or the broker went away."""
        raise NotImplementedError  # BrokerConnection's

    async def _all(self, method: str, key: str, timeout: float, label: str) -> list[dict[str, Any]]:
        """Every page of a list request."""
        items: list[dict[str, Any]] = []
        cursor = None
        async with asyncio.timeout(timeout):
            while True:
                listed = await self._asked(method, {"cursor": cursor} if cursor else {}, timeout, label)
                items += [item for item in listed.get(key, []) if isinstance(item, dict)]
                cursor = listed.get("nextCursor")
                if not cursor:
                    return items

    async def read_resource(self, uri: str, timeout: float) -> dict[str, Any]:
        """resources/read, in wire form ({"contents": [...]})."""
        return dict(await self._asked("resources/read", {"uri": uri}, timeout, ""))

    async def list_resource_uris(self, timeout: float) -> list[str]:
        return [str(r["uri"]) for r in await self._all("resources/list", "resources", timeout, "resources/list: ")
                if "uri" in r]

    async def prompt_arguments(self, name: str) -> list[tuple[str, bool]] | None:
        for prompt in await self._all("prompts/list", "prompts", self.start_timeout, "prompts/list: "):
            if prompt.get("name") == name:
                return [(str(a.get("name")), bool(a.get("required"))) for a in prompt.get("arguments") or ()]
        return None

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        result = await self._asked("prompts/get", {"name": name, "arguments": arguments}, self.start_timeout,
                                   f"prompts/get {name}: ")
        texts = [(m.get("content") or {}).get("text") for m in result.get("messages", []) if isinstance(m, dict)]
        return "\n\n".join(t for t in texts if isinstance(t, str) and t)
