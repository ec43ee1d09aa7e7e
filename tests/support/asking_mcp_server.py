"""A tiny real MCP server (stdio) that asks the user things: `python tests/support/asking_mcp_server.py`.

Tools: `book()` asks for a name and a number of guests (elicitation) and says what it got.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("asking")


class Booking(BaseModel):
    name: str = Field(description="who the table is for")
    guests: int


@server.tool(description="Book a table: asks the user who for and how many.")
async def book(ctx: Context) -> str:
    answer = await ctx.elicit("Who is the table for?", Booking)
    if answer.action == "accept":
        return f"booked for {answer.data.name}, {answer.data.guests} guests"
    return f"not booked ({answer.action})"


if __name__ == "__main__":
    server.run()
