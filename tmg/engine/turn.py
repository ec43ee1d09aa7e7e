"""A Turn: one model call within a prompt, and what it produced."""

from __future__ import annotations

from dataclasses import dataclass, field
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

    @property
    def response_text(self) -> str:
        return self.completion.text if self.completion else ""
