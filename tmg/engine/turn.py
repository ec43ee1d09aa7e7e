"""A Turn: one model call within a prompt, and what it produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

from tmg.llm.gateway import Completion


@dataclass
class Turn:
    """Handed to hooks. ``stored`` holds the messages this turn appended to history."""

    prompt_id: int
    index: int  # 1-based within the prompt
    user_text: str
    session_id: str
    mode: str
    model: str = ""
    provider: str = ""  # the PROVIDERS entry that answered (FAILOVER_ORDER may change it)
    completion: Completion | None = None
    stored: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # What the user typed, when `user_text` holds more (a one-shot's piped stdin): memory learns
    # only from this (memory.md §4). None: `user_text` is all typed.
    typed_text: str | None = None
    previous_answer: str = ""  # the answer before this prompt: a correction is relative to it

    @property
    def typed(self) -> str:
        return self.user_text if self.typed_text is None else self.typed_text

    @property
    def response_text(self) -> str:
        return self.completion.text if self.completion else ""


def last_answer(view: Sequence[dict[str, Any]]) -> str:
    """The text of the last answer before the next user message (a few messages back at most)."""
    for message in reversed(view):
        if message.get("role") == "user":
            return ""
        if message.get("role") == "assistant" and isinstance(message.get("content"), str) and message["content"]:
            return message["content"]
    return ""
