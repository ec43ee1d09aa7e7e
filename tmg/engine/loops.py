"""Loop detection: the model asking again for tool calls it already made in this prompt."""

from __future__ import annotations

from collections import Counter

from tmg.llm.gateway import ToolCallRequest

CORRECTION = (
    "You already made this exact tool call in this conversation and its result is above. "
    "Do not repeat it: use that result, try something different, or answer the user."
)

# An identical call may legitimately come back once (after something changed); a third time,
# or an immediate repeat of the whole previous turn, is a loop (A, A or A, B, A, B, A).
_MAX_SEEN = 2


class LoopDetector:
    """Counts the tool calls of one prompt; a fresh detector per prompt."""

    def __init__(self) -> None:
        self._previous: tuple[tuple[str, str], ...] | None = None
        self._seen: Counter[tuple[str, str]] = Counter()

    def is_repeat(self, calls: list[ToolCallRequest]) -> bool:
        keys = tuple(sorted((c.name, c.arguments.strip()) for c in calls))
        repeated = keys == self._previous or any(self._seen[k] >= _MAX_SEEN for k in keys)
        self._previous = keys
        self._seen.update(keys)
        return repeated
