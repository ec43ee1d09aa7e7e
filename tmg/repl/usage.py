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
    unreported: int = 0  # calls whose provider sent no usage: their tokens are unknown, not zero

    def add(self, prompt_tokens: int | None, completion_tokens: int | None, cost: float | None) -> None:
        """One call's figures; None tokens: the provider did not report them."""
        self.calls += 1
        if prompt_tokens is None or completion_tokens is None:
            self.unreported += 1
            self.cost = None  # a total missing some calls' cost is not a total
            return
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        if cost is None:
            self.unpriced += 1
            self.cost = None
        elif self.cost is not None:
            self.cost += cost

    def line(self) -> str:
        if self.unreported == self.calls:
            return "tokens unknown (the provider reported no usage) · cost n/a"
        price = f"${self.cost:.4f}" if self.cost is not None else "cost n/a"
        line = f"{self.prompt_tokens:,} in / {self.completion_tokens:,} out · {price}"
        if self.unreported:
            line += f" (plus {self.unreported} call{'s' if self.unreported != 1 else ''} with unknown usage)"
        return line


def stored_tally(messages: Iterable[dict[str, Any]]) -> Tally:
    """The session's total from its stored history (every run of it, not only this one)."""
    tally = Tally()
    for message in messages:
        # A summary record carries the usage of the summary request(s) that wrote it.
        usage = (message.get("meta") or {}).get("usage") if message.get("role") in ("assistant", "summary") else None
        if isinstance(usage, dict):
            known = usage.get("in") is not None and usage.get("out") is not None
            tally.add(int(usage["in"]) if known else None, int(usage["out"]) if known else None, usage.get("cost"))
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
        tokens = (usage.prompt_tokens, usage.completion_tokens) if usage.reported else (None, None)
        self.prompt.add(*tokens, usage.cost)
        self.run.add(*tokens, usage.cost)

    def on_text(self, delta: str) -> None: ...
    def on_answer(self, turn: Turn) -> None: ...
    def on_interrupted(self, partial: str, turn: Turn) -> None: ...
    def on_turn_end(self, turn: Turn) -> None: ...
    def on_tool(self, name: str, arguments: str, result: ToolResult) -> None: ...
    def on_notice(self, message: str) -> None: ...
