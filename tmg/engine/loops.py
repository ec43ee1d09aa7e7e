"""Loop detection: the model asking for the very same tool calls it just made."""

from __future__ import annotations

from tmg.llm.gateway import ToolCallRequest

CORRECTION = (
    "You already made this exact tool call in this conversation and its result is above. "
    "Do not repeat it: use that result, try something different, or answer the user."
)


class LoopDetector:
    """Remembers the tool calls of the previous turn of the same prompt."""

    def __init__(self) -> None:
        self._previous: tuple[tuple[str, str], ...] | None = None

    def reset(self) -> None:
        self._previous = None

    def is_repeat(self, calls: list[ToolCallRequest]) -> bool:
        key = tuple(sorted((c.name, c.arguments.strip()) for c in calls))
        repeated = key == self._previous
        self._previous = key
        return repeated
