"""write_file and edit_file: the tools that change files, only inside the roots, only against what
the model has seen (the ReadLedger), each call described with the diff it would make.

Text is kept byte-exact: files are decoded with `surrogateescape`, so an edit of a file that is
not valid UTF-8 changes only the replaced text. Writes are atomic (a temporary file renamed over
the old one, its permissions kept): a crash never leaves half a file.
"""

from __future__ import annotations

import asyncio
import difflib
from pathlib import Path
from typing import Any

from tmg.atomic_file import replace_file
from tmg.permissions.action import ToolAction
from tmg.tools.content import SNIFF_BYTES, binary_kind
from tmg.tools.files import MAX_TRACKED_BYTES, RootGuard, invalid_path
from tmg.tools.ledger import ReadLedger, state_of
from tmg.tools.registry import Tool, ToolResult

PREVIEW_LINES = 200  # a longer diff is cut in the consent prompt (the change itself is whole)
_CODEC = ("utf-8", "surrogateescape")


def _decode(data: bytes) -> str:
    return data.decode(*_CODEC)


def _encode(text: str) -> bytes:
    return text.encode(*_CODEC)


def unified_diff(before: str, after: str, label: str) -> str:
    """The change as a unified diff, at most PREVIEW_LINES lines."""
    lines = list(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                      f"a/{label}", f"b/{label}", n=3))
    rows = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]
    text = "".join(rows[:PREVIEW_LINES])
    if len(rows) > PREVIEW_LINES:
        text += f"[diff cut: {len(rows) - PREVIEW_LINES} more lines]\n"
    return text.rstrip("\n") or "(no change)"


def _lines(text: str) -> str:
    n = len(text.splitlines())
    return "1 line" if n == 1 else f"{n} lines"


def _read_existing(path: Path) -> bytes | str:
    """The file's bytes, or why it cannot be edited as text."""
    size = path.stat().st_size
    if size > MAX_TRACKED_BYTES:
        return f"{path.name} is {size:,} bytes, too big to edit here (limit {MAX_TRACKED_BYTES:,}); use shell"
    data = path.read_bytes()
    kind = binary_kind(path, data[:SNIFF_BYTES])
    if kind is not None:
        return f"{path.name} is a binary file ({kind}); it cannot be edited as text"
    return data


class _FileChanger(Tool):
    """What write_file and edit_file share: the guard, the ledger, the label a diff shows."""

    def __init__(self, guard: RootGuard, ledger: ReadLedger) -> None:
        self._guard = guard
        self._ledger = ledger

    def _label(self, path: Path) -> str:
        try:
            return path.relative_to(self._guard.roots[0]).as_posix()
        except ValueError:
            return str(path)

    def _save(self, path: Path, data: bytes) -> None:
        # A replaced file keeps its permissions (a script stays executable).
        replace_file(path, data, mode=path.stat().st_mode & 0o7777 if path.exists() else None)
        self._ledger.record(path, state_of(path, data))  # the model knows what it wrote


class WriteFileTool(_FileChanger):
    name = "write_file"
    description = ("Create a file, or replace one whole (read it first). Prefer edit_file to change part "
                   "of a file. Folders are created as needed.")
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the working directory"},
            "content": {"type": "string", "description": "The whole new content"},
        },
        "required": ["path", "content"],
    }

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        raw, content = str(arguments.get("path", "")), str(arguments.get("content", ""))
        if invalid_path(raw) is not None:
            return self._guard.action(self.name, "write", raw)
        path = self._guard.locate(raw)
        try:
            before = _read_existing(path) if path.is_file() else None
        except OSError:
            before = None
        if before is None:  # the whole new content, as a diff from nothing (bounded like one)
            preview = f"new file {self._label(path)}, {_lines(content)}:\n" + unified_diff("", content, self._label(path))
        elif isinstance(before, str):
            preview = f"replace {self._label(path)} ({before}) with {_lines(content)}"
        else:
            preview = unified_diff(_decode(before), content, self._label(path))
        return self._guard.action(self.name, "write", raw, preview=preview)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        raw = str(arguments.get("path", ""))
        if "content" not in arguments:
            return ToolResult("error: give the content to write", is_error=True)
        content = str(arguments["content"])
        try:
            path = self._guard.resolve(raw)
            if path.is_dir():
                return ToolResult(f"error: {raw} is a folder", is_error=True)
            existed = path.exists()
            if existed:
                # Replacing a file is allowed only against the version the model has seen.
                before = await asyncio.to_thread(path.read_bytes)
                stale = self._ledger.stale_reason(path, before)
                if stale:
                    return ToolResult(f"error: {stale}", is_error=True)
            await asyncio.to_thread(self._save, path, _encode(content))
        except (OSError, PermissionError) as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        verb = "replaced" if existed else "created"
        return ToolResult(f"{verb} {self._label(path)} ({_lines(content)})")


class EditFileTool(_FileChanger):
    name = "edit_file"
    description = ("Replace one exact, unique piece of a file's text. Read the file first; copy old_string "
                   "exactly (without read_file's line numbers), with enough lines around it to be unique.")
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, relative to the working directory"},
            "old_string": {"type": "string", "description": "The exact text to replace"},
            "new_string": {"type": "string", "description": "The text to put in its place"},
        },
        "required": ["path", "old_string", "new_string"],
    }

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        raw = str(arguments.get("path", ""))
        if invalid_path(raw) is not None:
            return self._guard.action(self.name, "write", raw)
        path = self._guard.locate(raw)
        preview = f"edit {self._label(path)}"
        try:
            data = _read_existing(path) if path.is_file() else None
        except OSError:
            data = None
        if isinstance(data, bytes):
            edited = _replace(_decode(data), str(arguments.get("old_string", "")), str(arguments.get("new_string", "")))
            if isinstance(edited, tuple):
                preview = unified_diff(_decode(data), edited[0], self._label(path))
        return self._guard.action(self.name, "write", raw, preview=preview)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        raw = str(arguments.get("path", ""))
        old, new = arguments.get("old_string"), arguments.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return ToolResult("error: give old_string and new_string as text", is_error=True)
        if not old:
            return ToolResult("error: old_string is empty; to create a file use write_file", is_error=True)
        if old == new:
            return ToolResult("error: old_string and new_string are the same; nothing to change", is_error=True)
        try:
            path = self._guard.resolve(raw)
            if not path.is_file():
                return ToolResult(f"error: {raw} is not a file (to create one use write_file)", is_error=True)
            data = await asyncio.to_thread(_read_existing, path)
            if isinstance(data, str):
                return ToolResult(f"error: {data}", is_error=True)
            stale = self._ledger.stale_reason(path, data)
            if stale:
                return ToolResult(f"error: {stale}", is_error=True)
            edited = _replace(_decode(data), old, new)
            if isinstance(edited, str):
                return ToolResult(f"error: {edited.format(path=raw)}", is_error=True)
            text, first, last = edited
            await asyncio.to_thread(self._save, path, _encode(text))
        except (OSError, PermissionError) as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        where = f"line {first}" if first == last else f"lines {first}-{last}"
        return ToolResult(f"edited {self._label(path)} (new text at {where})")


def _replace(text: str, old: str, new: str) -> tuple[str, int, int] | str:
    """``text`` with its one occurrence of ``old`` replaced, and the new text's first and last
    line; or why not (a template for the path). A file with CRLF line ends takes the model's LF text."""
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        return ("old_string was not found in {path}; read the file again and copy the text exactly "
                "(spaces, tabs and line breaks included, without the line numbers)")
    if count > 1:
        return (f"old_string occurs {count} times in {{path}}; include more of the surrounding lines "
                "so that it matches exactly one place")
    at = text.index(old)
    first = text.count("\n", 0, at) + 1
    return text[:at] + new + text[at + len(old):], first, first + max(new.count("\n") - new.endswith("\n"), 0)
