"""Priority 5: drop empty content parts and empty messages, which providers reject."""

from __future__ import annotations

from typing import Any

from tmg.context.incremental import SeenPrefix
from tmg.context.pipeline import Message, TurnContext


def _cleaned(m: Message) -> Message | None:
    """The message without empty text parts; None when nothing is left to send."""
    content = m.get("content")
    if isinstance(content, list):
        parts = [p for p in content if not (isinstance(p, dict) and p.get("type") == "text" and not p.get("text"))]
        if len(parts) != len(content):
            m = {**m, "content": parts}
        content = parts
    if not content and not m.get("tool_calls") and m.get("role") in ("user", "assistant", "system"):
        return None
    return m


class CleanersTransformer:
    """Not persisted: the same stored messages are cleaned again each turn, so the verdict on
    each examined message is remembered and only new messages are looked at."""

    name = "cleaners"
    priority = 5

    def __init__(self) -> None:
        self._seen = SeenPrefix()
        self._fixes: dict[int, tuple[Message, Message | None]] = {}  # id -> (stored, replacement)

    async def apply(self, ctx: TurnContext) -> None:
        messages = ctx.messages
        start = self._seen.unchanged(messages)
        if start == 0:
            self._fixes = {}
        for m in messages[start:]:
            fixed = _cleaned(m)
            if fixed is not m:
                self._fixes[id(m)] = (m, fixed)  # holding m keeps its id unique
        self._seen.mark(messages)
        if self._fixes:
            ctx.messages[:] = [r for r in (self._replacement(m) for m in messages) if r is not None]

    def _replacement(self, m: Message) -> Any:
        fix = self._fixes.get(id(m))
        return fix[1] if fix is not None and fix[0] is m else m
