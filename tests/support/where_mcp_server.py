"""A tiny real MCP server for tests (stdio) that says which process serves it and where:
`python tests/support/where_mcp_server.py`. Tool: `where()` answers "pid=<pid> cwd=<folder>
calls=<n>" (n counts this process's calls: state a warm server keeps between tmg runs). With
$STARTS_FILE set, each start appends a line to that file (a test counts the starts).
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("where")
_calls = 0
if os.environ.get("STARTS_FILE"):
    with open(os.environ["STARTS_FILE"], "a", encoding="utf-8") as starts:
        starts.write(f"{os.getpid()}\n")


@server.tool(description="Which process answers, in which folder, and how many calls it has served.",
             annotations=ToolAnnotations(read_only_hint=True))  # it only reads: it runs without asking
def where() -> str:
    global _calls
    _calls += 1
    return f"pid={os.getpid()} cwd={os.getcwd()} calls={_calls}"


if __name__ == "__main__":
    server.run()
