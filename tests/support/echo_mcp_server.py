"""A tiny real MCP server for tests (stdio): `python tests/support/echo_mcp_server.py`.

Tools: `echo(text)` answers the text; `fail()` answers an `isError` result; `crash()` kills
the server mid-call (a transport failure for the client); `nap(seconds)` sleeps, then answers;
`peek(path)` answers a file's text.
All but `scribble(path, text)` say they only read (readOnlyHint): the tests of what a result
carries are not permission tests; `scribble` writes a file and says so.
`refuse()` answers a JSON-RPC error (not a result); `weather()` declares an outputSchema its
structured content does not match; `grow()` adds the tool `extra` and sends
notifications/tools/list_changed. `ECHO_EXTRA_TOOLS=N` adds N more tools, `extra_001`... (many tools).
"""

from __future__ import annotations

import os
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent

server = MCPServer("echo")
READS = ToolAnnotations(read_only_hint=True)


@server.tool(description="Answer the text back, unchanged.", annotations=READS)
def echo(text: str) -> str:
    return text


@server.tool(description="Answer a file's text (what another program may change under a cache).", annotations=READS)
def peek(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


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


@server.tool(description="Always refused: the server answers a JSON-RPC error, not a result.", annotations=READS)
def refuse() -> str:
    raise MCPError(INVALID_PARAMS, "the refuse tool is always refused")


@server.tool(description="Today's weather (its structured content misses its declared outputSchema).",
             annotations=READS)
def weather() -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="sunny, 21 C")],
                          structured_content={"temperature": "warm"})


# Published, not validated by the server itself (a hand-built schema without a model): what a
# server with a stale or wrong schema sends.
server._tool_manager.get_tool("weather").fn_metadata.output_schema = {  # noqa: SLF001
    "type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]}


@server.tool(description="Add the tool `extra` and tell the client its tool list changed.", annotations=READS)
async def grow(ctx: Context) -> str:
    if server._tool_manager.get_tool("extra") is None:  # noqa: SLF001
        server.add_tool(lambda: "extra here", name="extra", description="Added by grow.", annotations=READS)
    await ctx.session.send_tool_list_changed()
    return "grown"


for n in range(1, int(os.environ.get("ECHO_EXTRA_TOOLS", "0")) + 1):
    server.add_tool(lambda n=n: f"extra {n}", name=f"extra_{n:03d}", description=f"Extra tool number {n}.")


if __name__ == "__main__":
    server.run()
