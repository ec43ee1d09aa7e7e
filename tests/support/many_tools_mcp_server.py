"""A real MCP server (stdio) offering 40 tools with large schemas, as big tool servers do:
`python tests/support/many_tools_mcp_server.py`. Each tool answers its own name."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("many")

_DESCRIPTION = ("Look up records in the inventory system number {n}. Supports filtering by region, owner, status "
                "and date ranges, paging through large result sets, and sorting by any indexed column. Returns "
                "a JSON list of matching records with their identifiers, owners, timestamps and audit trail.")


def _make(n: int) -> None:
    def tool(region: str = "", owner: str = "", status: str = "", since: str = "", until: str = "",
             page: int = 1, sort_by: str = "") -> str:
        return f"tool {n}"

    tool.__name__ = f"inventory_{n:02d}"
    server.tool(description=_DESCRIPTION.format(n=n))(tool)


for _n in range(40):
    _make(_n)


if __name__ == "__main__":
    server.run()
