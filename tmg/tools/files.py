"""Read-only file tools, confined to allowed roots (symlinks resolved before the check)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tmg.permissions.action import ToolAction
from tmg.tools.registry import ToolResult

MAX_READ_BYTES = 200_000
MAX_ENTRIES = 500


def _read_head(path: Path, size: int) -> bytes:
    """At most ``size`` bytes: a multi-GB log is never read whole (and never on the event loop)."""
    with path.open("rb") as f:
        return f.read(size)


class RootGuard:
    """Resolves a user- or model-given path and refuses anything outside the roots."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = [r.resolve() for r in roots]

    def resolve(self, raw: str) -> Path:
        base = self.roots[0]
        path = (base / Path(raw).expanduser()).resolve()
        if not any(path == r or r in path.parents for r in self.roots):
            raise PermissionError(f"{raw} is outside the allowed folders ({', '.join(map(str, self.roots))})")
        return path


class ReadFileTool:
    name = "read_file"
    description = "Read a UTF-8 text file under the working directory. Returns its contents."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "File path, relative to the working directory"}},
        "required": ["path"],
    }

    def __init__(self, guard: RootGuard) -> None:
        self._guard = guard

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        return ToolAction(self.name, "read", paths=(str(arguments.get("path", "")),))

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            path = self._guard.resolve(str(arguments.get("path", "")))
            if not path.is_file():
                return ToolResult(f"error: {arguments.get('path')} is not a file", is_error=True)
            data = await asyncio.to_thread(_read_head, path, MAX_READ_BYTES + 1)
        except (OSError, PermissionError) as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_READ_BYTES:
            text += f"\n[truncated at {MAX_READ_BYTES} bytes]"
        return ToolResult(text)


class ListFolderTool:
    name = "list_folder"
    description = "List the entries of a folder under the working directory (folders end with /)."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Folder path, relative; default '.'"}},
    }

    def __init__(self, guard: RootGuard) -> None:
        self._guard = guard

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        return ToolAction(self.name, "read", paths=(str(arguments.get("path") or "."),))

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            path = self._guard.resolve(str(arguments.get("path") or "."))
            if not path.is_dir():
                return ToolResult(f"error: {arguments.get('path')} is not a folder", is_error=True)
            entries = sorted(path.iterdir(), key=lambda p: p.name)
        except (OSError, PermissionError) as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        names = [p.name + ("/" if p.is_dir() else "") for p in entries[:MAX_ENTRIES]]
        if len(entries) > MAX_ENTRIES:
            names.append(f"[{len(entries) - MAX_ENTRIES} more entries not shown]")
        return ToolResult("\n".join(names) if names else "(empty folder)")
