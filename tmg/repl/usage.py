"""Tokens and cost: one line after each answer, and the session's total for ``/cost``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from tmg.engine.turn import Turn
from tmg.llm.gateway import Usage
from tmg.tools.registry import ToolResult


@dataclass
class Tally:
    """Tokens and cost over some model calls; ``cost`` is None once any call was unpriced."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = 0.0
    unpriced: int = 0

    def add(self, prompt_tokens: int, completion_tokens: int, cost: float | None) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        if cost is None:
            self.unpriced += 1
            self.cost = None
        elif self.cost is not None:
            self.cost += cost

    def line(self) -> str:
        price = f"${self.cost:.4f}" if self.cost is not None else "cost n/a"
        return f"{self.prompt_tokens:,} in / {self.completion_tokens:,} out · {price}"


def stored_tally(messages: Iterable[dict[str, Any]]) -> Tally:
    """The session's total from its stored history (every run of it, not only this one)."""
    tally = Tally()
    for message in messages:
        usage = (message.get("meta") or {}).get("usage") if message.get("role") == "assistant" else None
        if isinstance(usage, dict):
            tally.add(int(usage.get("in") or 0), int(usage.get("out") or 0), usage.get("cost"))
    return tally


class UsageMeter:
    """An engine-events sink counting the model calls of the prompt that is running.

    :meth:`start` begins a prompt; the REPL prints :attr:`prompt` after the answer. A prompt that
    failed after some calls still counts them.
    """

    def __init__(self) -> None:
        self.prompt = Tally()
        self.run = Tally()  # every call this process made, across /new and /mode

    def start(self) -> None:
        self.prompt = Tally()

    def on_usage(self, usage: Usage, turn: Turn) -> None:
        self.prompt.add(usage.prompt_tokens, usage.completion_tokens, usage.cost)
        self.run.add(usage.prompt_tokens, usage.completion_tokens, usage.cost)

    def on_text(self, delta: str) -> None: ...
    def on_answer(self, turn: Turn) -> None: ...
    def on_interrupted(self, partial: str, turn: Turn) -> None: ...
    def on_turn_end(self, turn: Turn) -> None: ...
    def on_tool(self, name: str, arguments: str, result: ToolResult) -> None: ...
    def on_notice(self, message: str) -> None: ...
