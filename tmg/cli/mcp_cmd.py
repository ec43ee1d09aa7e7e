"""``tmg mcp``: the configured MCP servers, each started as a chat would start it, with its status
(ready, starting, failed and why), transport, tool count, and whether it is kept warm.

The servers get the same wait a one-shot's first prompt gives them (tmg.mcp.session_servers), so what this
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
    from tmg.mcp.oauth import OAuthStore
    from tmg.paths import tmg_home
    from tmg.mcp.server_set import McpToolServers

    servers = McpToolServers(oauth_store=OAuthStore.for_env(envr.env))  # stored logins; never a new one
    home = tmg_home(envr.env)
    home.mkdir(parents=True, exist_ok=True)  # the servers' stderr logs go there, before any chat made it
    # Started as a chat in this folder starts them (the same roots): the tools counted are the chat's.
    session = servers.for_session(config, home, warn=lambda m: envr.stderr.write(f"tmg: warning: {m}\n"), cwd=envr.cwd)
    for server in session.servers:
        server.set_warn(lambda _m: None)  # a server's own failure is its line below
    servers.start()
    try:
        await session.settle()
        return servers.status_lines()
    finally:
        await servers.aclose()


def _url_server(name: str, config_path: str | None, envr: Environment):
    """The config's URL server `name` that may log in with OAuth, and the config (TmgError when not)."""
    from tmg.config.loader import load_config
    from tmg.redaction import process_redactor
    from tmg.errors import TmgError

    config, warnings = load_config(config_path, envr.env, envr.cwd)
    process_redactor().add(config.secrets())
    for w in warnings:
        envr.stderr.write(f"tmg: warning: {w}\n")
    entry = config.mcp_servers.get(name)
    if entry is None:
        names = ", ".join(config.mcp_servers) or "none"
        raise TmgError(f"no MCP server named {name} in the config (servers: {names})")
    if not entry.url:
        raise TmgError(f"MCP server {name} is a stdio server; OAuth logins are for URL servers")
    from tmg.mcp.oauth import sets_authorization

    if sets_authorization(entry.headers):
        raise TmgError(f"MCP server {name} is given an Authorization header in MCP_SERVERS.{name}.HEADERS; "
                       "remove it to log in with OAuth instead")
    return entry


def login(name: str, config_path: str | None, envr: Environment) -> int:
    """``tmg mcp login NAME``: a fresh OAuth login to a URL server (the URL to open is printed;
    the browser comes back to tmg on 127.0.0.1), kept for the chats that follow."""
    from tmg.errors import TmgError
    from tmg.mcp.oauth import OAuthStore
    from tmg.mcp.errors import McpStartError
    from tmg.mcp.spec import spec_from_config

    entry = _url_server(name, config_path, envr)
    store = OAuthStore.for_env(envr.env)
    asked: list[str] = []
    try:
        count = asyncio.run(_login(spec_from_config(entry), entry.timeout, store, envr, asked))
    except McpStartError as exc:
        raise TmgError(f"MCP server {exc}") from exc
    tools = f"{count} tool{'s' if count != 1 else ''}"
    if not store.has_login(entry.url):
        envr.stdout.write(f"MCP server {name} answers without a login ({tools}); nothing to store\n")
    elif not asked:
        envr.stdout.write(f"already logged in to MCP server {name} ({tools}); `tmg mcp logout {name}` forgets it\n")
    else:
        envr.stdout.write(f"logged in to MCP server {name}: {tools} (the login is kept in {store.path})\n")
    return 0


async def _login(spec, start_timeout: float, store, envr: Environment, asked: list[str]) -> int:
    from tmg.mcp.connection import McpConnection
    from tmg.mcp.oauth import login_line

    def show(server: str, url: str) -> None:
        asked.append(url)
        envr.stdout.write(login_line(server, url) + "\n")
        envr.stdout.flush()

    conn = McpConnection(spec, start_timeout=start_timeout)
    conn.oauth_store, conn.show_login = store, show
    async with conn:
        return len(conn.tools)


def logout(name: str, config_path: str | None, envr: Environment) -> int:
    """``tmg mcp logout NAME``: forget the stored OAuth login of a URL server."""
    from tmg.mcp.oauth import OAuthStore

    entry = _url_server(name, config_path, envr)
    if OAuthStore.for_env(envr.env).forget(entry.url):
        envr.stdout.write(f"forgot the OAuth login of MCP server {name}\n")
    else:
        envr.stdout.write(f"no OAuth login stored for MCP server {name}\n")
    return 0
