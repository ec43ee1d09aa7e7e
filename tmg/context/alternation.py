"""Priority 6: a prompt that was never answered gets a marker answer, in the payload only.

tmg stores each prompt before its answer; a run killed in between (kill -9, a crash, power loss)
leaves a user message with no answer, and the next prompt stores a second one right after it.
Chat templates that require alternating roles (llama.cpp serving SmolLM2, Mistral, Gemma) reject
that request, and would keep rejecting every later one of the session.
"""

from __future__ import annotations

from tmg.context.incremental import SeenPrefix
from tmg.context.pipeline import Message, TurnContext

UNANSWERED = "[no answer: tmg stopped before answering this]"


class AlternationTransformer:
    """Not persisted (the stored history stays as it was written); only new messages are
    examined each turn, and the gaps found so far are remembered by message identity."""

    name = "alternation"
    priority = 6

    def __init__(self) -> None:
        self._seen = SeenPrefix()
        self._gaps: dict[int, Message] = {}  # id -> the user message that follows an unanswered one
        self._last_role: str | None = None

    async def apply(self, ctx: TurnContext) -> None:
        messages = ctx.messages
        start = self._seen.unchanged(messages)
        if start == 0:
            self._gaps, self._last_role = {}, None
        for m in messages[start:]:
            role = m.get("role")
            if role == "user" and self._last_role == "user":
                self._gaps[id(m)] = m  # holding m keeps its id unique
            if role in ("user", "assistant", "tool"):
                self._last_role = role
        self._seen.mark(messages)
        if self._gaps:
            fixed: list[Message] = []
            for m in messages:
                if self._gaps.get(id(m)) is m:
                    fixed.append({"role": "assistant", "content": UNANSWERED})
                fixed.append(m)
            ctx.messages[:] = fixed
