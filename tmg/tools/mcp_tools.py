"""The tools of the session's MCP servers, offered to the model as `mcp_<server>_<tool>` (SPEC §7):
a ToolSource for the registry over tmg.mcp's SessionServers.

A turn offers the tools of the servers ready at that moment (a server still starting is waited
for before the turn, bounded: `SessionServers.settle`); a server's TOOLS include/exclude, the cap
on tools per request and deferred schemas (`mcp_find_tools`) are tool_offer.py's. Each call is
judged from the tool's annotations (readOnlyHint) and its server's REQUIRES_CONSENT.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from tmg.config.model import Config
from tmg.mcp.outcome import ToolSpec
from tmg.mcp.session_servers import SessionServers
from tmg.mcp.tool_server import McpToolServer
from tmg.permissions.action import Effect, ToolAction
from tmg.tools.registry import ToolResult
from tmg.tools.tool_offer import DEFER_SHARE, FIND_SCHEMA, FIND_TOOLS, ToolFilter, defer_limit, search

MAX_NAME_CHARS = 64  # OpenAI's limit on a function name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def one_line(text: str, limit: int = 200) -> str:
    """A description on one line, cut: what a search result lists."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def public_name(server: str, tool: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """`mcp_<server>_<tool>` with every character outside `[A-Za-z0-9_-]` made `_`, at most 64
    characters, and made unique against `taken` with a numeric suffix."""
    base = _UNSAFE.sub("_", f"mcp_{server}_{tool}")[:MAX_NAME_CHARS]
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name = base[: MAX_NAME_CHARS - len(suffix)] + suffix
        n += 1
    return name


class McpTools:
    """A ToolSource for the registry: the tools of one session's MCP servers."""

    def __init__(self, session: SessionServers, config: Config, *, warn: Callable[[str], None] | None = None) -> None:
        """`config`: the session's, for each server's TOOLS include/exclude and the size past which
        schemas are offered on demand (tool_offer.py). `warn`: the session's (default)."""
        self._session = session
        self._filters = {name: ToolFilter(entry.tools_include, entry.tools_exclude)
                         for name, entry in config.mcp_servers.items()}
        self._defer_chars = defer_limit(config.max_history_tokens)
        self._warn = warn or session.warn
        # Every public name once offered, with its server and the tool as last listed (judged so
        # while its server reconnects; a call to a withdrawn one is told why it fails).
        self._names: dict[str, tuple[McpToolServer, ToolSpec]] = {}
        self._deferring = False
        self._loaded: set[str] = set()  # deferred tools mcp_find_tools loaded, offered from then on
        self._told_deferred = False
        self._told_cap: int | None = None

    def _current(self) -> dict[str, tuple[McpToolServer, ToolSpec]]:
        """The tools of the servers ready now, by public name."""
        current: dict[str, tuple[McpToolServer, ToolSpec]] = {}
        for server in self._session.servers:
            allowed = self._filters.get(server.name, ToolFilter())
            for tool in server.tools.values():
                if allowed.allows(tool.name):
                    # mcp_find_tools is taken: a server's tool never shadows the deferred search
                    current[public_name(server.name, tool.name, {*current, FIND_TOOLS})] = (server, tool)
        self._names.update(current)
        return current

    def schemas(self) -> list[dict[str, Any]]:
        """The tools of the servers ready now, in OpenAI `tools` format; past the deferral limit,
        `mcp_find_tools` and the tools it loaded."""
        entries = {
            name: {"type": "function", "function": {
                "name": name, "description": tool.description,
                "parameters": tool.input_schema or {"type": "object", "properties": {}}}}
            for name, (_server, tool) in self._current().items()
        }
        size = len(json.dumps(list(entries.values())))
        self._deferring = size > self._defer_chars
        if not self._deferring:
            return list(entries.values())
        if not self._told_deferred:
            self._told_deferred = True
            self._warn(f"the MCP servers' {len(entries)} tools would add {size:,} characters to every request "
                       f"(more than {DEFER_SHARE:.0%} of MAX_HISTORY_TOKENS); the model finds and loads them "
                       f"with {FIND_TOOLS} (narrow them with MCP_SERVERS.<name>.TOOLS: {{include: [...]}})")
        return [FIND_SCHEMA, *(entry for name, entry in entries.items() if name in self._loaded)]

    def over_limit(self, dropped: list[str], limit: int) -> None:
        """The registry left `dropped` out of a request that may carry `limit` tools: said once per count."""
        if self._told_cap == len(dropped):
            return
        self._told_cap = len(dropped)
        servers = sorted({self._names[n][0].name for n in dropped if n in self._names})
        self._warn(f"{len(dropped)} MCP tools are not offered (of servers {', '.join(servers)}): a request carries "
                   f"at most {limit} tools; choose them with MCP_SERVERS.<name>.TOOLS: {{include: [...], exclude: [...]}}")

    def owns(self, name: str) -> bool:
        if name == FIND_TOOLS:
            return self._deferring
        if name not in self._names:
            self._current()
        return name in self._names

    def _find(self, arguments: dict[str, Any]) -> ToolResult:
        """mcp_find_tools: load the tools best matching the query; they are offered from the next turn."""
        query = str(arguments.get("query") or "").strip()
        current = self._current()
        found = search(query, {name: tool.description for name, (_server, tool) in current.items()})
        if not found:
            return ToolResult(f"no MCP tool matches {query!r}; try other words (tools: {len(current)})")
        self._loaded.update(found)
        lines = [f"{name}: {one_line(current[name][1].description)}" for name in found]
        return ToolResult("loaded, callable from now on:\n" + "\n".join(lines))

    def action(self, name: str, arguments: dict[str, Any]) -> ToolAction:
        """An MCP tool's effect from its annotations (MCP 2025-06-18): readOnlyHint means it only
        reads; without annotations nothing is known, so the permission engine asks. The prompt
        shows the arguments: they are exactly what the server will be sent."""
        if name == FIND_TOOLS:  # reads the servers' tool lists, nothing else
            return ToolAction(name, "read")
        server, spec = self._names[name]
        hints = spec.annotations or {}
        effect: Effect = "read" if hints.get("readOnlyHint") is True else (
            "write" if hints.get("readOnlyHint") is False else "unknown")
        preview = json.dumps(arguments, ensure_ascii=False, indent=1)
        return ToolAction(name, effect, server=server.name, preview=preview,
                          requires_consent=server.name in self._session.consent)

    def call_limit(self, name: str, timeout: float) -> float:
        """The most a call of `name` may take (its server's CALL_TIMEOUT_MAX: progress extends it)."""
        if name == FIND_TOOLS:
            return timeout
        server, _tool = self._names[name]
        return server.call_bounds(timeout)[1]

    async def call(self, name: str, arguments: dict[str, Any], timeout: float) -> ToolResult:
        if name == FIND_TOOLS:
            return self._find(arguments)
        server, tool = self._names[name]
        shown = self._session.on_progress
        outcome = await server.call(tool.name, arguments, timeout, partial(shown, name) if shown is not None else None)
        return ToolResult(outcome.text, is_error=outcome.is_error, images=outcome.images)

    async def settle(self) -> None:
        """Before a turn's schemas: the servers' changed tool lists and their starts (SessionServers.settle)."""
        await self._session.settle()

