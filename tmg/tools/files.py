"""The file tools' common ground (RootGuard: confinement to the roots, secret-bearing paths) and
the read-only ones: read_file (line ranges, numbered) and list_folder."""

from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tmg.permissions.action import Effect, ToolAction
from tmg.permissions.sensitive import SensitivePaths
from tmg.tools.content import SNIFF_BYTES, binary_kind, summary
from tmg.tools.ledger import FileState, ReadLedger
from tmg.tools.registry import Tool, ToolResult


MAX_ENTRIES = 500
READ_LIMIT = 2000        # lines read_file shows by default
MAX_LINE_CHARS = 2000    # a longer line is cut (minified files, data on one line)
OUTPUT_BUDGET = 16_000   # characters a file tool returns: under the registry's cap, so the note survives
MAX_TRACKED_BYTES = 10_000_000  # bigger files are read but not recorded for edits (edit_file refuses them)
_LINE_READ = 1 << 16     # bytes read per line at most: one 1 GB line never lands in memory whole


class InvalidPath(OSError):
    """A path no file can have: a NUL byte, text the filesystem cannot encode."""


def invalid_path(raw: str) -> str | None:
    """Why ``raw`` cannot name a file, for the model; None when it can."""
    if "\0" in raw:
        return f"{raw!r} is not a valid path: it contains a NUL byte"
    try:
        os.fsencode(raw)
    except UnicodeError:
        return f"{raw!r} is not a valid path: it holds characters no file name can"
    return None


class RootGuard:
    """Resolves a user- or model-given path and refuses anything outside the roots; knows which
    paths hold secrets by nature (``sensitive``), so every file tool describes its call alike."""

    def __init__(self, roots: list[Path], sensitive: SensitivePaths | None = None) -> None:
        self.roots = [r.resolve() for r in roots]
        self.sensitive = sensitive

    def locate(self, raw: str) -> Path:
        """The absolute, symlink-resolved path ``raw`` names (relative to the first root), unchecked
        but for being a path at all (InvalidPath, an OSError, when it cannot be one)."""
        why = invalid_path(raw)
        if why is not None:
            raise InvalidPath(why)
        try:
            return (self.roots[0] / Path(raw).expanduser()).resolve()
        except (OSError, RuntimeError):  # a symlink loop: the path as written
            return self.roots[0] / raw

    def inside(self, path: Path) -> bool:
        return any(path == r or r in path.parents for r in self.roots)

    def resolve(self, raw: str) -> Path:
        path = self.locate(raw)
        if not self.inside(path):
            raise PermissionError(self._outside(raw))
        return path

    def listing(self, tool: str, raw: str) -> ToolAction:
        """A call that shows names only (list_folder, glob): never sensitive, never outside-refused
        here (running it refuses a folder outside the roots)."""
        if (why := invalid_path(raw)) is not None:
            return ToolAction(tool, "read", refusal=why)
        return ToolAction(tool, "read", paths=(str(self.locate(raw)),))

    def _outside(self, raw: str) -> str:
        return f"{raw} is outside the allowed folders ({', '.join(map(str, self.roots))})"

    def action(self, tool: str, effect: Effect, raw: str, preview: str = "") -> ToolAction:
        """A file tool's call on ``raw``: its resolved path, and why it is sensitive, if it is."""
        if (why := invalid_path(raw)) is not None:
            return ToolAction(tool, effect, preview=preview, refusal=why)
        path = self.locate(raw)
        if not self.inside(path):
            # Refused whatever consent would say: asking about the path (or naming a rule that
            # would allow it) would only promise what cannot happen.
            return ToolAction(tool, effect, preview=preview, refusal=self._outside(raw))
        why = self.sensitive.reason(path) if self.sensitive is not None else None
        return ToolAction(tool, effect, paths=(str(path),), preview=preview, sensitive=why)


@dataclass
class _Page:
    lines: list[str] = field(default_factory=list)
    total: int = 0           # lines in the file
    last: int = 0            # the last line shown
    state: FileState | None = None


def _read_page(path: Path, offset: int, limit: int) -> _Page | str:
    """Lines ``offset``.. (1-based) of a text file, numbered, within the limit and the output
    budget; the file's state for the ledger. A binary file gives its one-line summary instead."""
    page = _Page()
    size = path.stat().st_size
    digest = hashlib.sha256() if size <= MAX_TRACKED_BYTES else None
    used, full, fresh = 0, False, True
    with path.open("rb") as f:
        head = f.read(SNIFF_BYTES)
        kind = binary_kind(path, head)
        if kind is not None:
            return summary(path, kind, size)
        f.seek(0)
        while chunk := f.readline(_LINE_READ):
            if digest is not None:
                digest.update(chunk)
            starts, fresh = fresh, chunk.endswith(b"\n")
            if not starts:
                continue  # the rest of a line longer than one read: already marked cut
            page.total += 1
            if page.total < offset or full:
                continue
            text = chunk.decode("utf-8", errors="replace").rstrip("\r\n")
            if len(text) > MAX_LINE_CHARS or not fresh and len(chunk) == _LINE_READ:
                text = text[:MAX_LINE_CHARS] + " [line cut]"
            row = f"{page.total:>6}\t{text}"
            if len(page.lines) >= limit or (page.lines and used + len(row) + 1 > OUTPUT_BUDGET):
                full = True
                continue
            page.lines.append(row)
            used += len(row) + 1
            page.last = page.total
    if digest is not None:
        st = path.stat()
        page.state = FileState(st.st_mtime_ns, st.st_size, digest.hexdigest())
    return page


class ReadFileTool(Tool):
    name = "read_file"
    description = ("Read a text file under the working directory. Lines are numbered (number, tab, text); "
                   "a long file comes in pages, each ending with how to read on (offset/limit).")
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the working directory"},
            "offset": {"type": "integer", "description": "First line to read (1-based); default 1"},
            "limit": {"type": "integer", "description": f"How many lines; default {READ_LIMIT}"},
        },
        "required": ["path"],
    }

    def __init__(self, guard: RootGuard, ledger: ReadLedger | None = None) -> None:
        self._guard = guard
        self._ledger = ledger if ledger is not None else ReadLedger()

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        return self._guard.action(self.name, "read", str(arguments.get("path", "")))

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        raw = str(arguments.get("path", ""))
        try:
            offset = max(1, int(arguments.get("offset") or 1))
            limit = max(1, int(arguments.get("limit") or READ_LIMIT))
        except (TypeError, ValueError):
            return ToolResult("error: offset and limit must be whole numbers", is_error=True)
        try:
            path = self._guard.resolve(raw)
            if path.is_dir():
                return ToolResult(f"error: {raw} is a folder; use list_folder", is_error=True)
            if not path.is_file():
                return ToolResult(f"error: {raw} is not a file", is_error=True)
            page = await asyncio.to_thread(_read_page, path, offset, limit)
        except (OSError, PermissionError) as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        if isinstance(page, str):
            return ToolResult(page)
        if page.state is not None:
            self._ledger.record(path, page.state)
        if page.total == 0:
            return ToolResult("(empty file)")
        if offset > page.total:
            return ToolResult(f"error: offset {offset} is past the end ({raw} has {page.total} lines)", is_error=True)
        text = "\n".join(page.lines)
        if offset > 1 or page.last < page.total:
            more = f"; read more with offset={page.last + 1}" if page.last < page.total else ""
            text += f"\n[lines {offset}-{page.last} of {page.total}{more}]"
        return ToolResult(text)


class ListFolderTool(Tool):
    name = "list_folder"
    description = "List the entries of a folder under the working directory (folders end with /)."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Folder path, relative; default '.'"}},
    }

    def __init__(self, guard: RootGuard) -> None:
        self._guard = guard

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        # Names only, no content: listing ~/.ssh shows no secret, so it is never `sensitive`.
        return self._guard.listing(self.name, str(arguments.get("path") or "."))

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
            names.append(f"[{len(entries) - MAX_ENTRIES} more entries not shown; use glob with a pattern to narrow]")
        return ToolResult("\n".join(names) if names else "(empty folder)")
