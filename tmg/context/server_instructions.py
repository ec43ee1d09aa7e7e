"""Priority 11: what the MCP servers whose tools are offered say about using them (the
`instructions` of their initialize answer), in the system message after the persona, the
instruction files (9) and the skills (10).

A server's text is capped (`MAX_CHARS_PER_SERVER`): it rides every request, and it is the
server's words, not the user's. The text changes only when a server becomes ready or goes away,
so the system message stays byte-identical between prompts otherwise (servers' prefix caches).
"""

from __future__ import annotations

from collections.abc import Callable

from tmg.context.pipeline import TurnContext

MAX_CHARS_PER_SERVER = 2000


class ServerInstructionsTransformer:
    name = "server-instructions"
    priority = 11

    def __init__(self, instructions: Callable[[], list[tuple[str, str]]]) -> None:
        self._instructions = instructions  # (server, text) of the servers ready now (the engine waited for them)

    async def apply(self, ctx: TurnContext) -> None:
        parts = [_part(server, text) for server, text in self._instructions() if text.strip()]
        if not parts or not ctx.messages or ctx.messages[0].get("role") != "system":
            return
        system = dict(ctx.messages[0])
        system["content"] = f"{system.get('content') or ''}\n\n" + "\n\n".join(parts)
        ctx.messages[0] = system


def _part(server: str, text: str) -> str:
    text = text.strip()
    if len(text) > MAX_CHARS_PER_SERVER:
        text = text[:MAX_CHARS_PER_SERVER] + f" [... {len(text) - MAX_CHARS_PER_SERVER} more characters cut]"
    return f"Instructions from MCP server {server} (for its tools, mcp_{server}_*):\n{text}"
