"""``tmg mcp``: the configured MCP servers, each started as a chat would start it, with its status
(ready, starting, failed and why), transport, tool count, and whether it is kept warm.

The servers get the same wait a one-shot's first prompt gives them (mcp_tools.py), so what this
shows is what a one-shot would get; a WARM server is left running in the broker.
"""

from __future__ import annotations

import asyncio

from tmg.environment import Environment


def list_servers(config_path: str | None, envr: Environment) -> int:
    from tmg.config.loader import load_config

    config, warnings = load_config(config_path, envr.env, envr.cwd)
    for w in warnings:
        envr.stderr.write(f"tmg: warning: {w}\n")
    lines = asyncio.run(_status_lines(config, envr))
    if config.memory.enabled and config.memory.server in config.mcp_servers:
        lines.append(f"{config.memory.server}: the memory server (its tools are memory's; see `tmg memory status`)")
    if not lines:
        lines = ["no MCP servers configured (MCP_SERVERS in the config)"]
    envr.stdout.write("".join(f"{line}\n" for line in lines))
    return 0


async def _status_lines(config, envr: Environment) -> list[str]:
    from tmg.session.store import tmg_home
    from tmg.tools.mcp_tools import McpToolServers

    servers = McpToolServers()
    tools = servers.tools_for(config, tmg_home(envr.env), warn=lambda m: envr.stderr.write(f"tmg: warning: {m}\n"))
    for server in tools.servers:
        server.set_warn(lambda _m: None)  # a server's own failure is its line below
    servers.start()
    try:
        await tools.settle()
        return servers.status_lines()
    finally:
        await servers.aclose()
