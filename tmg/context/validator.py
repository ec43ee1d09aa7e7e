"""Priority 130: the payload is well formed and fits the model's window, or a clear error."""

from __future__ import annotations

import json

from tmg.context.pipeline import TurnContext, content_text
from tmg.errors import TmgError

CHARS_PER_TOKEN = 4  # a cheap, deliberately pessimistic-enough estimate; no tokenizer import


class ContextLimitError(TmgError):
    """The payload cannot fit the model's context window."""


def message_tokens(m: dict) -> int:
    total = 4 + len(content_text(m)) // CHARS_PER_TOKEN
    if m.get("tool_calls"):
        total += len(json.dumps(m["tool_calls"])) // CHARS_PER_TOKEN
    return total


def estimate_tokens(messages: list[dict]) -> int:
    return sum(message_tokens(m) for m in messages)


class _TokenCache:
    """Per-message estimates, so a long session is not re-measured in full every turn.

    Keyed by identity: stored messages are the same dict objects from turn to turn. Each entry
    holds its message, so an id cannot be reused while cached; entries not seen in a turn go.
    """

    def __init__(self) -> None:
        self._entries: dict[int, tuple[dict, int]] = {}

    def total(self, messages: list[dict]) -> int:
        entries, fresh = self._entries, {}
        total = 0
        for m in messages:
            hit = entries.get(id(m))
            tokens = hit[1] if hit is not None and hit[0] is m else message_tokens(m)
            fresh[id(m)] = (m, tokens)
            total += tokens
        self._entries = fresh
        return total


class FinalValidator:
    name = "final-validator"
    priority = 130

    def __init__(self) -> None:
        self._tokens = _TokenCache()

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
        estimate = self._tokens.total(ctx.messages)
        if estimate > ctx.config.max_history_tokens:
            raise ContextLimitError(
                f"the conversation is about {estimate} tokens, over MAX_HISTORY_TOKENS "
                f"({ctx.config.max_history_tokens}); start a new session with --new or /new, "
                "or set MAX_HISTORY_TURNS to send only the latest turns"
            )
