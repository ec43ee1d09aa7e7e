"""An MCP server's prompt (`/mcp__SERVER__PROMPT args` in the REPL), filled in by the server.

`args` is `key=value` words, or else the whole text for the prompt's first argument; a required
argument left out is said with the usage, never sent.
"""

from __future__ import annotations

from typing import Any

from tmg.mcp.errors import McpCallError


async def fill_prompt(conn: Any, server: str, prompt: str, arg: str, command: str) -> str:
    """Prompt `prompt` of the server behind `conn`, filled in from `arg`, as one text.

    Raises:
        McpCallError: with a line for the user (no such prompt, a required argument missing, the
            server's failure).
    """
    params = await conn.prompt_arguments(prompt)
    if params is None:
        raise McpCallError(f"MCP server {server} has no prompt named {prompt}")
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
        raise McpCallError(f"prompt {prompt} of MCP server {server} needs {', '.join(missing)} ({command} {usage})")
    return await conn.get_prompt(prompt, arguments)
