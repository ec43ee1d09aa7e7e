"""The Tool protocol and the registry the Executing phase calls through."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Protocol

from tmg.permissions.action import PermissionGate, ToolAction
from tmg.media import Image
from tmg.tools.tool_offer import MAX_TOOLS

MAX_RESULT_CHARS = 20_000  # bigger outputs are truncated with a note to the model


@dataclass(frozen=True)
class ToolResult:
    """What the model gets back: text, and the images the tool returned (the text notes each one)."""

    content: str
    is_error: bool = False
    images: tuple[Image, ...] = ()
    # The prompt ends once this turn's tools ran, with no further model call (a one-shot's plan
    # in plan mode: the user must answer it in another run).
    ends_prompt: bool = False


class Tool(Protocol):
    """A callable the model can ask for. ``parameters`` is a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any]

    async def run(self, arguments: dict[str, Any]) -> ToolResult: ...

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        """What this call would do, for the permission gate (a tool without it counts as `unknown`)."""
        ...


class ToolSource(Protocol):
    """Tools that come and go while a session runs (MCP servers): asked for its schemas each turn."""

    def schemas(self) -> list[dict[str, Any]]:
        """The tools it offers now, in OpenAI ``tools`` format."""
        ...

    def owns(self, name: str) -> bool:
        """True when ``name`` is one of its tools (offered now, or before it was withdrawn)."""
        ...

    async def call(self, name: str, arguments: dict[str, Any], timeout: float) -> ToolResult:
        """Run the tool within ``timeout`` seconds; a failure is an error result, not a raise."""
        ...

    async def settle(self) -> None:
        """Wait a very short bound for tools still becoming available (before a turn's schemas)."""
        ...

    def action(self, name: str, arguments: dict[str, Any]) -> ToolAction:
        """What this call would do, for the permission gate."""
        ...


# A source bounds its own calls by the timeout; the registry's bound is only a backstop.
_SOURCE_SLACK_S = 2.0


class ToolRegistry:
    """Looks tools up by name and runs them bounded, never letting one crash the turn."""

    def __init__(self, tools: list[Tool] | None = None, sources: list[ToolSource] | None = None,
                 gate: PermissionGate | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = list(sources or [])
        self._gate = gate or PermissionGate()
        for tool in tools or []:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    async def settle(self) -> None:
        """Let the sources finish becoming available, each within its own short bound."""
        if self._sources:
            await asyncio.gather(*(source.settle() for source in self._sources))

    def schemas(self) -> list[dict[str, Any]]:
        """The tools in OpenAI ``tools`` format."""
        own = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in self._tools.values()
        ]
        for source in self._sources:  # a built-in tool keeps its name against a source's
            offered = [s for s in source.schemas() if s["function"]["name"] not in self._tools]
            room = max(MAX_TOOLS - len(own), 0)
            if len(offered) > room:  # a provider rejects the whole request past the limit
                tell = getattr(source, "over_limit", None)
                if tell is not None:
                    tell([s["function"]["name"] for s in offered[room:]], MAX_TOOLS)
                offered = offered[:room]
            own.extend(offered)
        return own

    async def call(self, name: str, raw_arguments: str, timeout: float) -> ToolResult:
        tool = self._tools.get(name)
        source = None if tool is not None else next((s for s in self._sources if s.owns(name)), None)
        if tool is None and source is None:
            known = ", ".join(s["function"]["name"] for s in self.schemas()) or "none"
            return ToolResult(f"error: there is no tool named {name!r} (available: {known})", is_error=True)
        try:
            # strict=False: small models put raw newlines inside JSON strings (code, poems); the
            # meaning is unambiguous, so a control character there is accepted, not an error.
            arguments = json.loads(raw_arguments or "{}", strict=False)
            if not isinstance(arguments, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            return ToolResult(f"error: the arguments are not a JSON object ({exc}); send valid JSON", is_error=True)
        action = _describe(name, tool, source, arguments)
        if action.refusal is not None:
            return ToolResult(f"error: {name} failed: {action.refusal}", is_error=True)
        verdict = await self._gate.check(action)
        if not verdict.allowed:
            return ToolResult(f"refused: {verdict.note or verdict.reason}", is_error=True)
        try:
            if tool is not None:
                # A tool that bounds itself (shell: the model may ask for longer) gets its own
                # limit, with the registry's bound as a backstop just past it.
                own = getattr(tool, "time_limit", None)
                bound = own(arguments) + _SOURCE_SLACK_S if own is not None else timeout
                result = await asyncio.wait_for(tool.run(arguments), bound)
            else:
                assert source is not None
                # A source that bounds its own calls (progress extends an MCP call) says how far.
                limit = getattr(source, "call_limit", None)
                bound = limit(name, timeout) if limit is not None else timeout
                result = await asyncio.wait_for(source.call(name, arguments, timeout), bound + _SOURCE_SLACK_S)
        except asyncio.TimeoutError:
            return ToolResult(f"error: {name} did not finish within {timeout:g} s", is_error=True)
        except Exception as exc:  # a broken tool is the model's problem to route around, not a crash
            return ToolResult(f"error: {name} failed: {exc}", is_error=True)
        if len(result.content) > MAX_RESULT_CHARS:
            cut = result.content[:MAX_RESULT_CHARS]
            note = f"\n[truncated: {len(result.content) - MAX_RESULT_CHARS} more characters not shown]"
            result = ToolResult(cut + note, result.is_error, result.images, result.ends_prompt)
        return result


def _describe(name: str, tool: Tool | None, source: ToolSource | None, arguments: dict[str, Any]) -> ToolAction:
    describe = getattr(tool if tool is not None else source, "action", None)
    if describe is None:
        return ToolAction(name, "unknown")
    return describe(arguments) if tool is not None else describe(name, arguments)
