"""A small generic MCP client layer: start a server (stdio, or Streamable HTTP by URL), list its
tools, call one with a bound, close it quickly.

The memory seams (`tmg.memory`) and, later, MCP tool servers both sit on this. Nothing here
imports `mcp` at module level: tmg's fast paths (`-t`, `--help`) must never pay for it.
"""

from tmg.mcp.errors import McpCallError, McpStartError
from tmg.mcp.outcome import ToolOutcome, ToolSpec
from tmg.mcp.spec import ServerSpec, child_environment, spec_from_config

__all__ = [
    "McpCallError",
    "McpStartError",
    "ServerSpec",
    "ToolOutcome",
    "ToolSpec",
    "child_environment",
    "spec_from_config",
]
