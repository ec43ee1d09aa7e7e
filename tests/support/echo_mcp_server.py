"""A tiny real MCP server for tests (stdio): `python tests/support/echo_mcp_server.py`.

Tools: `echo(text)` answers the text; `fail()` answers an `isError` result; `crash()` kills
the server mid-call (a transport failure for the client); `nap(seconds)` sleeps, then answers.
Those four say they only read (readOnlyHint); `scribble(path, text)` writes a file and says so.
"""

from __future__ import annotations

import os
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("echo")
READS = ToolAnnotations(read_only_hint=True)


@server.tool(description="Answer the text back, unchanged.", annotations=READS)
def echo(text: str) -> str:
    return text


@server.tool(description="Always fails (an isError result).", annotations=READS)
def fail() -> str:
    raise ToolError("the fail tool always fails")


@server.tool(description="Kill the server (a crash mid-call).", annotations=READS)
def crash() -> str:
    os._exit(3)


@server.tool(description="Sleep for some seconds, then answer 'awake'.", annotations=READS)
def nap(seconds: float) -> str:
    time.sleep(seconds)
    return "awake"


@server.tool(description="Write text to a file.",
             annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def scribble(path: str, text: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return f"wrote {path}"


if __name__ == "__main__":
    server.run()
