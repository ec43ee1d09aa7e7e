"""The process's MCP tool servers: every `MCP_SERVERS` entry except the memory server (tmg drives
that one itself while memory is on) and the shipped PLUR tmg adds for memory, each started once
per process, in the background and in parallel, as the first session opens, and shared by the
sessions that follow (the REPL's /new and /mode).

A `WARM: true` server is reached through the memory broker, which keeps it running between tmg
runs (one per spec and working folder): this set sits above the broker for that, and is the only
part of the MCP wing that does. A server that does not start costs one warning; the chat goes on.
A `REQUIRES_CONSENT: true` server is started and its tools offered, and the permission engine asks
before each of its calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tmg.config.model import Config, McpServerConfig
from tmg.mcp.errors import McpCallError
from tmg.mcp.pool import ServerPool
from tmg.mcp.session_servers import SessionServers
from tmg.mcp.spec import ServerSpec, spec_from_config
from tmg.mcp.start_times import StartTimes
from tmg.mcp.tool_server import Connection, McpToolServer

if TYPE_CHECKING:
    from tmg.mcp.callbacks import ElicitFn
    from tmg.mcp.oauth import OAuthStore, ShowLogin

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")  # as in a tool's public name: `/mcp__NAME__PROMPT`, log files


def _connect(spec: ServerSpec, start_timeout: float) -> Connection:
    from tmg.mcp.connection import McpConnection

    return McpConnection(spec, start_timeout=start_timeout)


def _connect_warm(spec: ServerSpec, start_timeout: float) -> Connection:
    # A WARM server through the broker (kept warm per spec, working folder included), or spawned
    # directly when the broker is off or cannot be had (tmg.broker.launch).
    from tmg.broker.launch import connect

    return connect(spec, start_timeout, kind="tools")


def offered_entries(config: Config) -> list[McpServerConfig]:
    """The MCP_SERVERS entries whose tools the model may get: not the memory server while memory
    is on, not the shipped PLUR tmg adds for memory. A server that requires consent is offered:
    the permission engine asks before each of its calls."""
    entries = []
    for name, entry in config.mcp_servers.items():
        if config.memory.enabled and name == config.memory.server:
            continue
        if is_shipped(config, name):  # the PLUR tmg adds for memory, not a server the user declared
            continue
        entries.append(entry)
    return entries


def is_shipped(config: Config, name: str) -> bool:
    """True for an entry tmg added itself (the shipped memory server), not one from the config."""
    prefix = f"MCP_SERVERS.{name}."
    origins = [origin for path, origin in config.origins.items() if path.startswith(prefix)]
    return bool(origins) and all(origin == "default" for origin in origins)


def mcp_roots(config: Config, cwd: Path | None) -> tuple[str, ...]:
    """The folders MCP servers may work in: the working folder, then ROOTS (`~` expanded, a
    relative one against the working folder), each once."""
    base = cwd or Path.cwd()
    folders = [base] + [base / Path(root).expanduser() for root in config.roots]
    return tuple(dict.fromkeys(str(folder.resolve()) for folder in folders))


class McpToolServers:
    """The process's MCP tool servers (a ServerPool): each started once, shared by the sessions
    that follow (the REPL's /new and /mode), and closed when the process is done with them."""

    def __init__(self, *, warn: Callable[[str], None] = lambda _m: None,
                 connect: Callable[[ServerSpec, float], Connection] = _connect,
                 connect_warm: Callable[[ServerSpec, float], Connection] = _connect_warm,
                 ask_user: ElicitFn | None = None, log: Callable[[str], None] | None = None,
                 oauth_store: OAuthStore | None = None, show_login: ShowLogin | None = None) -> None:
        self._log = log  # servers' log messages (tmg --debug); None: not shown
        self._oauth_store = oauth_store  # OAuth logins (None: no server gets OAuth)
        self._show_login = show_login  # the REPL shows where to log in; None: a login is one line (one-shot)
        self._ask_user = ask_user  # the REPL's form for a server's questions; None: declined (one-shot)
        self._warn = warn
        self._connect = connect
        self._connect_warm = connect_warm
        self._pool: ServerPool[McpToolServer] = ServerPool()

    @property
    def servers(self) -> list[McpToolServer]:
        return list(self._pool)

    def for_session(self, config: Config, home: Path | None = None, *, ready_wait: float | None = None,
                    warn: Callable[[str], None] | None = None, cwd: Path | None = None) -> SessionServers:
        """The servers `config` offers to one session, reusing the running ones. Not started: call start().

        `ready_wait`: a fixed wait per prompt (TMG_MCP_WAIT); None waits as long as each
        server's remembered starts need (`McpToolServer.cold_wait`). Each server is told its
        roots: the working folder `cwd` and the config's ROOTS."""
        say = warn or self._warn
        roots = mcp_roots(config, cwd)
        times = StartTimes(home)
        chosen = []
        consent = set()
        for entry in offered_entries(config):
            if entry.requires_consent:
                consent.add(entry.name)
            errlog = home / f"mcp-{_UNSAFE.sub('_', entry.name)}.log" if home is not None else None
            spec = spec_from_config(entry, errlog, roots)
            connect = self._connect_warm if entry.warm and spec.command else self._connect
            server = self._pool.get(spec, lambda: self._new_server(spec, entry, connect, say, times))
            server.call_timeout, server.call_timeout_max = entry.call_timeout, entry.call_timeout_max
            server.set_warn(say)  # the latest session's: its transcript is the open one
            chosen.append(server)
        return SessionServers(chosen, ready_wait, consent=frozenset(consent), warn=say)

    def _new_server(self, spec: ServerSpec, entry: McpServerConfig, connect: Callable[[ServerSpec, float], Connection],
                    say: Callable[[str], None], times: StartTimes) -> McpToolServer:
        server = McpToolServer(spec, entry.timeout, connect, say, warm=entry.warm, times=times)
        if entry.sampling and connect is self._connect_warm:
            say(f"MCP server {entry.name}: SAMPLING is not available for WARM servers; its sampling requests "
                "are declined (set WARM: false to allow them)")
        server.ask_user = self._ask_user
        server.oauth_store, server.show_login = self._oauth_store, self._show_login
        if self._log is not None:
            server.log = self._log
        return server

    async def reconnect(self, name: str) -> str:
        """`/mcp reconnect NAME`: start the server afresh, whatever its state; one line saying how it went."""
        live = [s for s in self._pool if s.state != "closed"]
        server = next((s for s in live if s.name == name), None)
        if server is None:
            return f"no MCP tool server named {name} (servers: {', '.join(s.name for s in live) or 'none'})"
        if server.state == "starting":
            return f"MCP server {name} is still starting"
        if await server.reconnect(force=True):
            count = len(server.tools)
            return f"MCP server {name} reconnected: {count} tool{'s' if count != 1 else ''}"
        return f"MCP server {name} did not reconnect ({server.failure}); check it runs, then /mcp reconnect {name}"

    async def prompt(self, server_name: str, prompt: str, arg: str) -> str:
        """`/mcp__SERVER__PROMPT args`: the server's prompt, filled in, as the text to send.

        `args` is `key=value` words, or else the whole text for the prompt's first argument.
        Raises McpCallError with a line for the user when it cannot be had."""
        live = [s for s in self._pool if s.state != "closed"]
        server = next((s for s in live if _UNSAFE.sub("_", s.name) == server_name), None)
        if server is not None:
            await server.finish_starting()
        if server is None or server.state != "ready":
            ready = ", ".join(s.name for s in live if s.state == "ready") or "none"
            raise McpCallError(f"no ready MCP server named {server_name} (ready: {ready})")
        return await server.prompt(prompt, arg, f"/mcp__{server_name}__{prompt}")

    def start(self) -> None:
        """Start every server not started yet, in parallel (call on the event loop)."""
        self._pool.start()

    def status_lines(self) -> list[str]:
        """One line per server (`/mcp`)."""
        return [server.status() for server in self._pool]

    async def aclose(self) -> None:
        """Stop every server without waiting for it to exit by itself."""
        await self._pool.aclose()
