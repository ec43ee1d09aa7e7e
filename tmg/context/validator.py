"""Priority 130: the payload is well formed and fits the model's window, or a clear error."""

from __future__ import annotations

from tmg.context.incremental import SeenPrefix
from tmg.context.pipeline import TurnContext
from tmg.context.tokens import CHARS_PER_TOKEN, Budget, TokenEstimator, message_tokens, messages_tokens, tools_tokens
from tmg.errors import TmgError

__all__ = ["CHARS_PER_TOKEN", "ContextLimitError", "FinalValidator", "PromptTooLargeError", "check_prompt_size",
           "estimate_tokens", "message_tokens"]


class ContextLimitError(TmgError):
    """The payload cannot fit the model's context window."""


class PromptTooLargeError(TmgError):
    """One prompt is over the whole budget by itself: it is refused before it is stored."""


def check_prompt_size(text: str, max_tokens: int) -> None:
    """Refuse a prompt that could never be sent (a 50 MB pipe), before history or transcript
    keep it: nothing can shrink it, and a stored one would fail every later prompt too."""
    tokens = message_tokens({"role": "user", "content": text})
    if tokens > max_tokens:
        raise PromptTooLargeError(
            f"the prompt is about {tokens} tokens ({len(text.encode('utf-8', 'replace')) // 1024} KiB), over "
            f"MAX_HISTORY_TOKENS ({max_tokens}) on its own; it was not sent nor kept: send a smaller "
            "part of it (e.g. `head -c 100000 FILE | tmg ...`)"
        )


def estimate_tokens(messages: list[dict]) -> int:
    return messages_tokens(messages)


class FinalValidator:
    """Drops tool results whose call is not in the payload and checks the token estimate.

    The leading system message changes every turn; the history after it only grows, so its
    running estimate and known call ids are carried over and only new messages are measured.
    A pruned window starts elsewhere each time and is measured afresh (it is small).
    """

    name = "final-validator"
    priority = 130

    def __init__(self, estimator: TokenEstimator | None = None) -> None:
        self.estimator = estimator or TokenEstimator()
        self._seen = SeenPrefix()
        self._body_tokens = 0
        self._calls: set = set()
        self._orphans: dict[int, dict] = {}

    async def apply(self, ctx: TurnContext) -> None:
        messages = ctx.messages
        head = 0
        while head < len(messages) and messages[head].get("role") == "system":
            head += 1
        start = self._seen.unchanged(messages, head)
        if start == 0:
            self._body_tokens, self._calls, self._orphans = 0, set(), {}
        for m in messages[head + start:]:
            role = m.get("role")
            if role == "assistant":
                self._calls.update(c.get("id") for c in m.get("tool_calls") or ())
            elif role == "tool" and m.get("tool_call_id") not in self._calls:
                self._orphans[id(m)] = m  # every provider rejects a result without its call
                continue
            self._body_tokens += message_tokens(m)
        self._seen.mark(messages, head)
        if self._orphans:
            ctx.messages[:] = [m for m in messages if self._orphans.get(id(m)) is not m]
        raw = self._body_tokens + sum(message_tokens(m) for m in messages[:head]) + tools_tokens(ctx.tools)
        self.estimator.last_raw = raw
        estimate = self.estimator.scale(raw)
        budget = Budget.for_request(ctx.config, ctx.provider)
        if estimate > budget.hard:
            tools = f", {len(ctx.tools)} tool schemas included" if ctx.tools else ""
            off = "" if ctx.config.compaction.enabled else " (automatic compaction is off: COMPACTION.ENABLED)"
            raise ContextLimitError(
                f"the conversation is about {estimate:,} tokens{tools}, over the model's window of "
                f"{budget.hard:,}{off}; run /compact (tmg compact) to summarise older turns, or start a new "
                "session with /new (--new)"
            )
