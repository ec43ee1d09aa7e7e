"""A tiny real MCP server (stdio) that asks the user things, gives instructions and logs:
`python tests/support/asking_mcp_server.py`.

Tools: `book()` asks for a name and a number of guests (elicitation) and says what it got;
`chatty()` sends a log message, writes a line to stderr, and answers `said`; `open_page(url)` asks
the user to open a page (URL-mode elicitation) and says how they answered; `whoami()` answers the
client's name, version and capabilities as the client sent them (JSON); `work(steps)` reports
progress `steps` times; `folders()` asks the client for its roots. Prompt: `greet(name)`.
Resource: `note://hello`.
Its instructions are `$INSTRUCTIONS` (default: "Always call the user captain.").
"""

from __future__ import annotations

import json
import os
import sys

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("asking", instructions=os.environ.get("INSTRUCTIONS", "Always call the user captain."))


class Booking(BaseModel):
    name: str = Field(description="who the table is for")
    guests: int


# Said to only read: these tests are about questions and logs, not the permission engine's prompt.
READS = ToolAnnotations(read_only_hint=True)


@server.tool(description="Book a table: asks the user who for and how many.", annotations=READS)
async def book(ctx: Context) -> str:
    answer = await ctx.elicit("Who is the table for?", Booking)
    if answer.action == "accept":
        return f"booked for {answer.data.name}, {answer.data.guests} guests"
    return f"not booked ({answer.action})"


@server.tool(description="Log a message, write to stderr, answer 'said'.", annotations=READS)
async def chatty(ctx: Context) -> str:
    await ctx.info("chatty was called")
    print("chatty wrote to stderr", file=sys.stderr, flush=True)
    return "said"


@server.tool(description="Ask the user to open a page; say how they answered.", annotations=READS)
async def open_page(url: str, ctx: Context) -> str:
    answer = await ctx.elicit_url("Pay for the table there.", url, "pay-1")
    return f"page {answer.action}"


@server.tool(description="The client's name, version and capabilities, as it sent them.", annotations=READS)
async def whoami(ctx: Context) -> str:
    params = ctx.request_context.session.client_params
    return json.dumps({"name": params.client_info.name, "version": params.client_info.version,
                       "capabilities": params.capabilities.model_dump(mode="json", exclude_none=True)})


@server.tool(description="Report progress `steps` times, then say how many.", annotations=READS)
async def work(steps: int, ctx: Context) -> str:
    for step in range(steps):
        await ctx.report_progress(step + 1, steps, f"step {step + 1}")
    return f"worked {steps} steps"


@server.tool(description="The folders the client says this server may work in.", annotations=READS)
async def folders(ctx: Context) -> str:
    listed = await ctx.request_context.session.list_roots()
    return " ".join(str(root.uri) for root in listed.roots)


@server.resource("note://hello", description="A short note.")
def hello_note() -> str:
    return "hello from the note"


@server.prompt(description="Greet someone like a pirate.")
def greet(name: str) -> str:
    return f"Say hello to {name} like a pirate."


if __name__ == "__main__":
    server.run()
