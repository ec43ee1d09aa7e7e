"""todo_write: the model's own task list for a piece of work, which the user sees as it changes.

The list lives beside the history, as skills.jsonl does: ``todos.jsonl`` in the session folder,
one line per change holding the whole list (appended, O(1); the last line is the list). So a
resumed session has it again, and when summarising takes the model's own todo_write calls out of
what it is sent, the list still rides with the prompt (tmg.context.work_notes). `tmg -t` shows
each change (a notice in the transcript).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from tmg.permissions.action import ToolAction
from tmg.private_files import private_opener
from tmg.tools.registry import ToolResult

TODOS_FILE = "todos.jsonl"
STATES = ("pending", "in_progress", "completed")
MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
MAX_ITEMS = 50
MAX_ITEM_CHARS = 300
_TAIL_BYTES = 1 << 18  # the last line is read from the file's tail: a long session's file is never read whole


class TodoList:
    """A session's todo list: loaded from its file, replaced whole by each todo_write."""

    def __init__(self, session_dir: Path | None) -> None:
        self._path = session_dir / TODOS_FILE if session_dir is not None else None
        self.items: list[dict[str, str]] = self._load()

    def _load(self) -> list[dict[str, str]]:
        if self._path is None:
            return []
        try:
            with self._path.open("rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - _TAIL_BYTES))
                lines = f.read().splitlines()
        except OSError:
            return []
        for raw in reversed(lines):  # a torn last line (a crash mid-write): the one before it
            try:
                items = json.loads(raw).get("todos")
            except (ValueError, AttributeError):
                continue
            if isinstance(items, list):
                return [i for i in items if isinstance(i, dict) and i.get("status") in STATES]
        return []

    def replace(self, items: list[dict[str, str]]) -> None:
        self.items = items
        if self._path is None:
            return
        line = json.dumps({"ts": round(time.time(), 3), "todos": items}, ensure_ascii=False) + "\n"
        with open(self._path, "a", encoding="utf-8", opener=private_opener) as f:
            f.write(line)

    def lines(self) -> list[str]:
        return [f"{MARKS[i['status']]} {i['content']}" for i in self.items]

    def open_items(self) -> bool:
        return any(i["status"] != "completed" for i in self.items)

    def for_model(self) -> str:
        """The list as it rides with the prompt once the model's own calls are out of sight."""
        if not self.items:
            return ""
        return ("[tmg: your todo list for this work (kept across summaries; update it with todo_write):\n"
                + "\n".join(self.lines()) + "]")


class TodoWriteTool:
    name = "todo_write"
    description = ("Keep a todo list for a task of several steps: send the whole list each time, every item with "
                   "its status (pending, in_progress, completed). Mark an item in_progress before you start it and "
                   "completed as soon as it is done. The user sees the list as it changes.")
    parameters = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The whole list, in order",
                "items": {
                    "type": "object",
                    "properties": {"content": {"type": "string", "description": "What to do, in a few words"},
                                   "status": {"type": "string", "enum": list(STATES)}},
                    "required": ["content", "status"],
                },
            },
        },
        "required": ["todos"],
    }

    def __init__(self, todos: TodoList, show: Callable[[list[str]], None] = lambda _lines: None) -> None:
        self.todos = todos
        self._show = show

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        return ToolAction(self.name, "read")  # it changes only the session's own list: allowed in every mode

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        raw = arguments.get("todos")
        if not isinstance(raw, list):
            return ToolResult("error: todos must be a list of {content, status}", is_error=True)
        if len(raw) > MAX_ITEMS:
            return ToolResult(f"error: at most {MAX_ITEMS} items; merge some", is_error=True)
        items = []
        for n, item in enumerate(raw, 1):
            content = str(item.get("content", "")).strip() if isinstance(item, dict) else ""
            status = item.get("status") if isinstance(item, dict) else None
            if not content or status not in STATES:
                return ToolResult(f"error: item {n} needs a content and a status ({', '.join(STATES)})", is_error=True)
            items.append({"content": " ".join(content.split())[:MAX_ITEM_CHARS], "status": status})
        self.todos.replace(items)
        lines = self.todos.lines()
        self._show(lines)
        done = sum(i["status"] == "completed" for i in items)
        return ToolResult(f"todo list updated ({done} of {len(items)} done):\n" + "\n".join(lines) if items
                          else "todo list cleared")
