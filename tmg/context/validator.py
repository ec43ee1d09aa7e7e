"""Priority 130: the payload is well formed and fits the model's window, or a clear error."""

from __future__ import annotations

import json

from tmg.context.pipeline import TurnContext, content_text
from tmg.errors import TmgError

CHARS_PER_TOKEN = 4  # a cheap, deliberately pessimistic-enough estimate; no tokenizer import


class ContextLimitError(TmgError):
    """The payload cannot fit the model's context window."""


def estimate_tokens(messages: list[dict]) -> int:
    total = 0
    for m in messages:
        total += 4 + len(content_text(m)) // CHARS_PER_TOKEN
        if m.get("tool_calls"):
            total += len(json.dumps(m["tool_calls"])) // CHARS_PER_TOKEN
    return total


class FinalValidator:
    name = "final-validator"
    priority = 130

    async def apply(self, ctx: TurnContext) -> None:
        # A tool result whose call was pruned away is rejected by every provider: drop it.
        calls = set()
        kept = []
        for m in ctx.messages:
            if m.get("role") == "assistant":
                calls.update(c.get("id") for c in m.get("tool_calls") or ())
            if m.get("role") == "tool" and m.get("tool_call_id") not in calls:
                continue
            kept.append(m)
        ctx.messages[:] = kept
        estimate = estimate_tokens(ctx.messages)
        if estimate > ctx.config.max_history_tokens:
            raise ContextLimitError(
                f"the conversation is about {estimate} tokens, over MAX_HISTORY_TOKENS "
                f"({ctx.config.max_history_tokens}); start a new session with --new or /new, "
                "or set MAX_HISTORY_TURNS to send only the latest turns"
            )
