"""The tools (and instructions) each MCP server listed when it last started, remembered across runs
(TMG_HOME/mcp-tools.json), so a prompt can offer them while the server is still starting, or
before it is started at all, and wait only when the model calls one (issue 24 item 7).

A server is known by the digest of what starts it (tmg.mcp.start_times.spec_key): a changed
command, ENV value or URL is another server, never listed here. What is kept is what the server
told every client that asked (names, schemas, descriptions, annotations, instructions), never a
call's arguments or results. The file is written only when a listing differs from the one kept.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from tmg.atomic_file import replace_file
from tmg.mcp.outcome import ToolSpec
from tmg.mcp.spec import ServerSpec
from tmg.mcp.start_times import spec_key

FILE_NAME = "mcp-tools.json"
_MAX_SERVERS = 100  # the file stays small: the oldest servers are forgotten first


class KnownTools:
    """The remembered tool lists of the servers of one tmg home."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / FILE_NAME if home is not None else None
        self._known: dict[str, Any] | None = None

    def _load(self) -> dict[str, Any]:
        if self._known is None:
            self._known = {}
            if self.path is not None:
                with contextlib.suppress(OSError, ValueError):
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                    if isinstance(data, dict):
                        self._known = data
        return self._known

    def tools(self, spec: ServerSpec) -> tuple[dict[str, ToolSpec], str] | None:
        """(tools by name, instructions) the server listed last; None when it never started here."""
        entry = self._load().get(spec_key(spec))
        if not isinstance(entry, dict) or not isinstance(entry.get("tools"), list):
            return None
        tools: dict[str, ToolSpec] = {}
        for item in entry["tools"]:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                tools[item["name"]] = ToolSpec(item["name"], dict(item.get("inputSchema") or {}),
                                               str(item.get("description") or ""), item.get("annotations"))
        return tools, str(entry.get("instructions") or "")

    def record(self, spec: ServerSpec, tools: dict[str, ToolSpec], instructions: str) -> None:
        """Remember a listing (written at once, when it differs: a one-shot may end any moment)."""
        if self.path is None:
            return
        entry = {"tools": [{"name": t.name, "inputSchema": t.input_schema, "description": t.description,
                            "annotations": t.annotations} for t in tools.values()],
                 "instructions": instructions}
        self._known = None  # another tmg may have written since
        known = self._load()
        key = spec_key(spec)
        if known.get(key) == entry:
            return
        known.pop(key, None)
        known[key] = entry  # the newest goes last
        while len(known) > _MAX_SERVERS:
            known.pop(next(iter(known)))
        with contextlib.suppress(OSError):
            replace_file(self.path, json.dumps(known).encode())
