"""A tiny real MCP server for tests (stdio): `python tests/support/echo_mcp_server.py`.

Tools: `echo(text)` answers the text; `fail()` answers an `isError` result; `crash()` kills
the server mid-call (a transport failure for the client); `nap(seconds)` sleeps, then answers.
"""

from __future__ import annotations

import os
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("echo")


@server.tool(description="Answer the text back, unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="Always fails (an isError result).")
def fail() -> str:
    raise ToolError("the fail tool always fails")


@server.tool(description="Kill the server (a crash mid-call).")
def crash() -> str:
    os._exit(3)


@server.tool(description="Sleep for some seconds, then answer 'awake'.")
def nap(seconds: float) -> str:
    time.sleep(seconds)
    return "awake"


if __name__ == "__main__":
    server.run()
