"""Which MCP tools a request offers: a server's TOOLS include/exclude, the hard cap on tools per
request, and deferred schemas once they would take too much of the context.

Deferred: past `DEFER_SHARE` of the context budget, the servers' tools are not sent with every
request; the model gets `mcp_find_tools`, which searches their names and descriptions and loads
the matches, offered from the next turn on (the loaded set stays for the session).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

MAX_TOOLS = 128  # OpenAI rejects a request with more tools than this
DEFER_SHARE = 0.10  # of the context budget (MAX_HISTORY_TOKENS) the MCP tool schemas may take
CHARS_PER_TOKEN = 4  # the same rough measure as the context's estimate (tmg/context/validator.py)
FIND_TOOLS = "mcp_find_tools"
FIND_LIMIT = 8  # tools loaded by one search

FIND_SCHEMA: dict[str, Any] = {"type": "function", "function": {
    "name": FIND_TOOLS,
    "description": ("Search the tools of the connected MCP servers by what they do (words of their names "
                    "and descriptions) and load the best matches: they can be called from the next step "
                    "on. Use it when no offered tool fits the task."),
    "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "description": "what the tool should do, or tool names, e.g. 'git log'"}},
        "required": ["query"]}}}


@dataclass(frozen=True)
class ToolFilter:
    """A server's `TOOLS: {include, exclude}`: glob patterns on the server's own tool names."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def allows(self, tool: str) -> bool:
        if self.include and not any(fnmatchcase(tool, p) for p in self.include):
            return False
        return not any(fnmatchcase(tool, p) for p in self.exclude)


def defer_limit(max_history_tokens: int) -> int:
    """How many characters of MCP tool schemas a request carries before they are deferred."""
    return int(max_history_tokens * CHARS_PER_TOKEN * DEFER_SHARE)


_WORD = re.compile(r"[a-z0-9]+")


def search(query: str, catalog: dict[str, str]) -> list[str]:
    """The public names in `catalog` (name -> description) best matching `query`, best first.

    An exact name wins; otherwise each query word found in a name counts 3, in a description 1.
    """
    wanted = query.strip()
    exact = [name for name in catalog if name == wanted or name.endswith(f"_{wanted}")]
    words = set(_WORD.findall(query.lower()))
    scored = []
    for name, description in catalog.items():
        name_words = set(_WORD.findall(name.lower()))
        text_words = set(_WORD.findall(description.lower()))
        score = 3 * len(words & name_words) + len(words & text_words)
        if score:
            scored.append((-score, name))
    ranked = exact + [name for _, name in sorted(scored) if name not in exact]
    return ranked[:FIND_LIMIT]
