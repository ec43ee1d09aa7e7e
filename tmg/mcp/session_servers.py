"""One session's view of the process's MCP tool servers: the servers its config offers, what they
tell the model (instructions), the resources a prompt names (`@server:uri`, read all at once:
tmg.mcp.resource_refs), their sampling and questions routed to this session, and the wait for
servers still starting before a turn.

How their tools are offered to the model is the tool source's (tmg.tools.mcp_tools).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ContextManager

from tmg.mcp.errors import McpCallError
from tmg.mcp.resource_refs import MAX_REFERENCES, Attached, find_refs, missing_block, resource_block, unknown_servers
from tmg.mcp.tool_server import McpToolServer

if TYPE_CHECKING:
    from tmg.mcp.callbacks import SampleFn

# Told of a running call's progress: the tool's public name, progress, total, message.
ToolProgress = Callable[[str, float, "float | None", "str | None"], None]


def ready_wait(env: Mapping[str, str]) -> float | None:
    """A fixed wait per prompt for MCP servers still starting (``TMG_MCP_WAIT``, seconds), or
    None: each server is waited for as long as its remembered starts need (`McpToolServer.cold_wait`)."""
    try:
        return max(0.0, float(env["TMG_MCP_WAIT"]))
    except (KeyError, ValueError):
        return None


class SessionServers:
    """The MCP tool servers one session offers (shared with the sessions after it: tmg.mcp.server_set)."""

    def __init__(self, servers: list[McpToolServer], ready_wait: float | None = None, *,
                 consent: frozenset[str] = frozenset(), warn: Callable[[str], None] = lambda _m: None) -> None:
        """`ready_wait`: a fixed wait per prompt (TMG_MCP_WAIT); None waits as long as each server's
        remembered starts need. `consent`: the servers marked REQUIRES_CONSENT (every call asks)."""
        self._servers = servers
        self._consent = consent
        self._ready_wait = ready_wait
        self.warn = warn  # this session's: stderr and its transcript
        self.on_progress: ToolProgress | None = None  # the waiting line, when there is one

    def instructions(self) -> list[tuple[str, str]]:
        """(server, instructions) of the servers ready now, for the system message."""
        return [(s.name, s.instructions) for s in self._servers if s.state == "ready" and s.instructions]

    async def attach_resources(self, text: str, timeout: float) -> tuple[str, Attached]:
        """The prompt to send and the resources its `@server:uri` references name, read from the
        servers this session offers, all at once (tmg.mcp.resource_refs). A reference that
        cannot be read is one warning and a line in its place; the prompt goes on."""
        servers = {s.name: s for s in self._servers}
        if servers and "@" in text:
            for name in unknown_servers(text, servers):
                self.warn(f"@{name}: in the prompt names no MCP server (servers: {', '.join(servers)}); "
                           "it is sent as typed")
        text, refs = find_refs(text, servers)
        attached = Attached()
        if not refs:
            return text, attached
        if len(refs) > MAX_REFERENCES:
            self.warn(f"the prompt names {len(refs)} MCP resources; only the first {MAX_REFERENCES} are read")
            refs = refs[:MAX_REFERENCES]
        results = await asyncio.gather(*(servers[r.server].read_resource(r.uri, timeout) for r in refs),
                                       return_exceptions=True)
        for ref, result in zip(refs, results):
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                reason = str(result) if isinstance(result, McpCallError) else f"{type(result).__name__}: {result}"
                self.warn(f"MCP resource {ref} was not attached: {reason}; the prompt is sent without it")
                attached.blocks.append(missing_block(ref, reason))
            else:
                attached.blocks.append(resource_block(ref, result, attached.images))
        return text, attached

    def server_names(self) -> list[str]:
        """The names of the servers this session offers (what `@name:` may name)."""
        return [s.name for s in self._servers]

    async def resource_uris(self, name: str, timeout: float = 2.0) -> list[str]:
        """Server `name`'s resource URIs, for Tab completion of `@name:` (bounded; [] when none)."""
        server = next((s for s in self._servers if s.name == name), None)
        return await server.resource_uris(timeout) if server is not None else []

    @property
    def consent(self) -> frozenset[str]:
        """The servers marked REQUIRES_CONSENT: every call to one, and every sampling request, asks."""
        return self._consent

    def use_sampler(self, sampler: SampleFn) -> None:
        """This session's model answers its servers' sampling requests (those with SAMPLING: true)."""
        for server in self._servers:
            server.sampler = sampler

    def show_on(self, progress: ToolProgress, hold: Callable[[], ContextManager[None]]) -> None:
        """The session's waiting line: calls' progress is shown on it, and it is held off the
        screen while a server's question is answered."""
        self.on_progress = progress
        for server in self._servers:
            server.hold_screen = hold

    @property
    def servers(self) -> list[McpToolServer]:
        return list(self._servers)

    async def settle(self) -> None:
        """At a phase boundary (before a turn's schemas): list again the tools of servers that said
        their tools changed, and wait for servers still starting, all at once: each as long as its
        start needs (counted from its start, so later turns do not wait again), or the fixed
        `ready_wait`. A server left out is said once."""
        changed = [s for s in self._servers if s.tools_changed]
        if changed:
            await asyncio.gather(*(s.refresh_tools() for s in changed))
        starting = [s for s in self._servers if s.state == "starting"]
        if starting:
            await asyncio.gather(*(s.wait(self._bound(s)) for s in starting))
            for server in starting:
                server.tell_late()

    def _bound(self, server: McpToolServer) -> float:
        if self._ready_wait is not None:
            return self._ready_wait
        return server.cold_wait() - server.waited()
