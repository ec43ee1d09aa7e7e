"""tmg's MCP client, one wing: start a server (stdio, or Streamable HTTP by URL), list its tools,
call one with a bound, close it quickly; and the process's servers built on that.

The client:
- `spec`: how to reach one server (`ServerSpec`), and the environment its child process gets;
- `connection`: `McpConnection`, one live connection (`stdio`: a transport that closes in a
  moment; `callbacks`: what a server asks of tmg; `http_auth` and `oauth`: a URL server's
  credentials; `listing`: paged lists; `errors`: the client's exceptions and what the SDK's mean);
- `outcome`, `result_content`: what a call gives back, in tmg's terms.

The servers:
- `pool`: `PooledServer`, one server's life (starting, ready, failed, withdrawn, closed), and the
  pool of a kind (memory servers use it too); `start_times`: how long each took to start;
- `tool_server`: `McpToolServer`, a server whose tools the model gets: calls, prompts (`prompts`),
  resources, reconnects; `sampling`: its requests for the session's model, under consent;
- `session_servers`: `SessionServers`, one session's view of them (`resource_refs`: `@server:uri`);
- `server_set`: `McpToolServers`, the process's servers, reached directly or through the broker.

How their tools are offered to the model is tmg.tools.mcp_tools. Nothing here imports `mcp` at
module level: tmg's fast paths (`-t`, `--help`) must never pay for it.
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
