"""The Tool protocol and the registry the Executing phase calls through."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Protocol

MAX_RESULT_CHARS = 20_000  # bigger outputs are truncated with a note to the model


@dataclass(frozen=True)
class ToolResult:
    content: str
    is_error: bool = False


class Tool(Protocol):
    """A callable the model can ask for. ``parameters`` is a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any]

    async def run(self, arguments: dict[str, Any]) -> ToolResult: ...


class ToolRegistry:
    """Looks tools up by name and runs them bounded, never letting one crash the turn."""

    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def schemas(self) -> list[dict[str, Any]]:
        """The tools in OpenAI ``tools`` format."""
        return [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in self._tools.values()
        ]

    async def call(self, name: str, raw_arguments: str, timeout: float) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult(f"error: there is no tool named {name!r} (available: {known})", is_error=True)
        try:
            arguments = json.loads(raw_arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            return ToolResult(f"error: the arguments are not a JSON object ({exc}); send valid JSON", is_error=True)
        try:
            result = await asyncio.wait_for(tool.run(arguments), timeout)
        except asyncio.TimeoutError:
            return ToolResult(f"error: {name} did not finish within {timeout:g} s", is_error=True)
        except Exception as exc:  # a broken tool is the model's problem to route around, not a crash
            return ToolResult(f"error: {name} failed: {exc}", is_error=True)
        if len(result.content) > MAX_RESULT_CHARS:
            cut = result.content[:MAX_RESULT_CHARS]
            note = f"\n[truncated: {len(result.content) - MAX_RESULT_CHARS} more characters not shown]"
            result = ToolResult(cut + note, result.is_error)
        return result
