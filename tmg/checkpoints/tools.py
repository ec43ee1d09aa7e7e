"""The file and shell tools as the session offers them: each change kept before it is made.

`Checkpointed` wraps write_file and edit_file (before the call: the file as it is, once per
prompt; after it: what the prompt left) and shell (the command, which no rewind can undo). It asks
nothing and changes nothing of the tool's own behaviour. `PromptTracker` is the hook that knows
which prompt a turn belongs to, for the memory writes it records.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable

from tmg.checkpoints.log import CheckpointLog, PromptKey
from tmg.tools.registry import Tool, ToolResult

FILE_TOOLS = ("write_file", "edit_file")
SHELL = "shell"


def current_prompt(messages: list[dict[str, Any]]) -> PromptKey | None:
    """The prompt running now: the last user message of the history (during a prompt's turns it
    is that prompt's; the latest messages are searched, a turn's few)."""
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if message.get("role") == "user":
            ts = message.get("ts")
            return PromptKey(at, float(ts)) if isinstance(ts, (int, float)) else None
    return None


class Checkpointed:
    """``tool``, with what it changes kept in ``log`` first. ``locate`` resolves a path argument
    as the tool does; ``say`` tells the user a file that could not be kept."""

    def __init__(self, tool: Tool, log: CheckpointLog, prompt: Callable[[], PromptKey | None],
                 locate: Callable[[str], Path], say: Callable[[str], None] = lambda _t: None) -> None:
        self._tool = tool
        self._log = log
        self._prompt = prompt
        self._locate = locate
        self._say = say
        self.name = tool.name
        self.description = tool.description
        self.parameters = tool.parameters

    def __getattr__(self, name: str) -> Any:  # action, time_limit, ...: the tool's own
        return getattr(self._tool, name)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        prompt = self._prompt()
        if prompt is None:
            return await self._tool.run(arguments)
        if self.name == SHELL:
            # Said before it starts: whatever it does, even cut short, is beyond a rewind.
            self._log.ran(prompt, str(arguments.get("command", "")))
            return await self._tool.run(arguments)
        path = self._locate(str(arguments.get("path", "")))
        why = await asyncio.to_thread(self._log.keep, prompt, path)  # a copy of up to 10 MB, fsync'd
        if why:
            self._say(why)
        result = await self._tool.run(arguments)
        if not result.is_error:
            await asyncio.to_thread(self._log.left, prompt, path)
        return result


def checkpointed(tools: list[Tool], log: CheckpointLog, prompt: Callable[[], PromptKey | None],
                 locate: Callable[[str], Path], say: Callable[[str], None]) -> list[Tool]:
    """``tools`` with the file tools and shell wrapped (the others as they are)."""
    return [Checkpointed(t, log, prompt, locate, say) if t.name in (*FILE_TOOLS, SHELL) else t for t in tools]


class PromptTracker:
    """A hook: each turn's prompt id -> the prompt's key, so a memory write (detached, landing
    later) is recorded against the prompt that caused it."""

    def __init__(self, log: CheckpointLog, messages: Callable[[], list[dict[str, Any]]]) -> None:
        self._log = log
        self._messages = messages

    def before_turn(self, turn: Any) -> None:
        if turn.prompt_id not in self._log.prompts:
            key = current_prompt(self._messages())
            if key is not None:
                self._log.prompts[turn.prompt_id] = key

    def memory_written(self, prompt_id: int, kind: str, memory_id: str, text: str) -> None:
        key = self._log.prompts.get(prompt_id)
        if key is not None:
            self._log.wrote_memory(key, kind, memory_id, text)
