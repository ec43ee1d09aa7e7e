"""The REPL's input line on a terminal, wired to the open session: the prompt's label, the input
history, and what Tab completes (slash commands and skills, `@server:` resources, `@path` files)."""

from __future__ import annotations

from typing import Any

from tmg.paths import tmg_home
from tmg.repl import commands


def terminal_reader(repl: Any) -> Any:
    """A PromptInput for ``repl`` (tmg.repl.loop.Repl: its session, label and warning)."""
    from prompt_toolkit.completion import merge_completers

    from tmg.repl.input import FileCompleter, PromptInput, ResourceCompleter

    def redact(text: str) -> str:  # the open session's redactor: it learns reloaded secrets
        return repl.session.redact(text) if repl.session is not None else text

    def slash_names() -> list[str]:  # the commands, and the open session's skills (/NAME)
        skills = repl.session.skills if repl.session is not None else None
        return commands.names() + (skills.catalog.names() if skills is not None else [])

    def servers() -> list[str]:  # the MCP servers the open session offers (`@name:uri`)
        mcp = repl.session.mcp if repl.session is not None else None
        return mcp.server_names() if mcp is not None else []

    async def uris(name: str) -> list[str]:
        mcp = repl.session.mcp if repl.session is not None else None
        return await mcp.resource_uris(name) if mcp is not None else []

    at = merge_completers([ResourceCompleter(servers, uris), FileCompleter(repl.envr.cwd, servers)])
    return PromptInput(repl.label, tmg_home(repl.envr.env) / "input_history", slash_names, redact=redact,
                       warning=repl.warning, resources=at)
