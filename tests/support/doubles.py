"""Hand-written test doubles for MCP tool callers: explicit behaviour, never accept-anything mocks.

Doubles of the model gateway (FakeModel and its replies) live in `tests/doubles/model.py`."""

from __future__ import annotations

import asyncio
from typing import Any

from fakeplur.config import FakeConfig
from fakeplur.server import Fake
from tmg.mcp import ToolOutcome


class FakePlurCaller:
    """A ToolCaller backed by fakeplur in-process: checks every call against the real schemas
    (from the snapshot the contract tests compare with the live server) and answers with the
    real envelopes. Records every call it was sent."""

    def __init__(self, profile: str = "full", reject: frozenset[str] = frozenset()) -> None:
        self.fake = Fake(FakeConfig(profile=profile, reject=reject))
        self.calls: list[tuple[str, dict[str, Any], float]] = []

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(t["name"] for t in self.fake.tool_list())

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> ToolOutcome:
        self.calls.append((name, arguments, timeout))
        text, is_error = await self.fake.call(name, arguments)
        return ToolOutcome.from_text(text, is_error=is_error)


class GatedCaller(FakePlurCaller):
    """A FakePlurCaller that holds every call until the test sets `gate` (it ignores its timeout
    argument, like a hung server). `entered` is set once a call arrives; `cancelled` counts the
    calls abandoned while held."""

    def __init__(self, profile: str = "full", reject: frozenset[str] = frozenset()) -> None:
        super().__init__(profile, reject)
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.cancelled = 0

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> ToolOutcome:
        self.entered.set()
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return await super().call_tool(name, arguments, timeout)


class ScriptedCaller:
    """A ToolCaller that lists given tools and answers every call with one scripted behaviour:
    an outcome, an exception to raise, or a sleep longer than any bound."""

    def __init__(self, tools: set[str], answer: ToolOutcome | BaseException | float) -> None:
        self._tools = frozenset(tools)
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def tool_names(self) -> frozenset[str]:
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> ToolOutcome:
        self.calls.append((name, arguments))
        if isinstance(self.answer, BaseException):
            raise self.answer
        if isinstance(self.answer, float):
            await asyncio.sleep(self.answer)  # ignores its timeout on purpose
            raise AssertionError("the client should have given up before this")
        return self.answer
