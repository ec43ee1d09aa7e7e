"""Priority 80: the budget gatekeeper. Keeps what is sent under the threshold, cheaply first.

1. Estimate the request: messages, the memory block riding with the prompt, the tool schemas,
   the system message (:mod:`tmg.context.tokens`).
2. Over the threshold: cut old tool outputs outside the protected recent window to a stub that
   says what was cut (what is sent only; history keeps them).
3. Still over: summarise the older turns once with the model (:mod:`tmg.context.summary`). The
   recent turns stay verbatim, and a cut never falls between a tool call and its result. The
   summary becomes a record of its own in history (the engine appends it); later prompts start
   from it.

Bounded: one summary per prompt; one that fails or saves under 5% trips a breaker for the rest
of that prompt. COMPACTION.ENABLED false: nothing here changes what is sent (the final validator
then refuses a request over the window in one clear line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from tmg.config.model import Config
from tmg.context.incremental import SeenPrefix
from tmg.context.pipeline import Message, TurnContext
from tmg.context.summary import Summary, SummaryCall, SummaryFailed, summarise
from tmg.context.tokens import Budget, TokenEstimator, message_tokens, tools_tokens
from tmg.errors import TmgError
from tmg.llm.gateway import ProviderSpec
from tmg.session.history import summary_messages

RECENT_SHARE = 0.4  # of the threshold: the latest messages kept whole (never pruned or summarised)
MIN_SAVING = 0.05  # a summary that saves less is not worth the turns it hides
_PRUNE_FROM_CHARS = 800  # shorter tool outputs are left alone: their stub would save little

# (config, the chat's provider) -> how to call the summary model and its window in tokens.
SummaryModel = Callable[[Config, "ProviderSpec | None"], tuple[SummaryCall, int]]


@dataclass
class PendingSummary:
    """A summary made this turn: ``first_kept`` is the first message it does not replace."""

    summary: Summary
    first_kept: Message | None
    info: dict[str, Any] = field(default_factory=dict)


class BudgetGatekeeper:
    name = "budget"
    priority = 80

    def __init__(self, estimator: TokenEstimator, summary_model: SummaryModel | None = None,
                 announce: Callable[[str], None] = lambda _text: None,
                 before_summary: Callable[[str, str], Awaitable[None]] | None = None) -> None:
        self.estimator = estimator
        self._summary_model = summary_model
        self._announce = announce  # said before a summary request: it can take a while
        self._before_summary = before_summary  # (trigger "auto" or "manual", focus): the PreCompact hooks
        self._seen = SeenPrefix()
        self._body_raw = 0
        self._summarised_in: int | None = None  # the prompt that had its one summary
        self._tripped_in: int | None = None  # the prompt whose summary failed or saved too little

    async def apply(self, ctx: TurnContext) -> None:
        cfg = ctx.config
        budget = Budget.for_request(cfg, ctx.provider)
        head = _system_head(ctx.messages)
        raw = self._body(ctx.messages, head) + sum(message_tokens(m) for m in ctx.messages[:head])
        raw += sum(len(r) for r in ctx.riders) // 4 + tools_tokens(ctx.tools)
        before = self.estimator.scale(raw)
        ctx.meta["budget"] = {"tokens": before, "threshold": budget.threshold, "window": budget.window}
        forced = ctx.force_compact
        if not cfg.compaction.enabled or (before <= budget.threshold and not forced):
            return
        if ctx.persist_requested:
            # A repair rewrites the stored history from this list: stubs and a summary pair must
            # not become stored turns. The repaired history is stored; the next turn gatekeeps.
            return
        keep = int(budget.threshold * RECENT_SHARE)
        if forced:  # the provider said it is too long, whatever we estimated: keep less than now
            keep = min(keep, int(before * RECENT_SHARE))
        saved_raw, count = prune_tool_outputs(ctx.messages, head, self.estimator.scale, keep)
        estimate = self.estimator.scale(raw - saved_raw)
        if count:
            ctx.rewritten = True
            ctx.meta["budget"].update(tokens=estimate, pruned=count, pruned_tokens=before - estimate)
        if estimate <= budget.threshold and not forced:
            return
        if ctx.prompt_id in (self._summarised_in, self._tripped_in) or self._summary_model is None:
            return  # the final validator says whether the request still fits
        self._summarised_in = ctx.prompt_id
        made = await self.summarise(ctx.messages, cfg, ctx.provider, keep, ctx.meta, trigger="auto")
        if made is None:
            self._tripped_in = ctx.prompt_id
            return
        new_messages, pending = made
        after = self.estimator.scale(
            sum(message_tokens(m) for m in new_messages) + sum(len(r) for r in ctx.riders) // 4 + tools_tokens(ctx.tools))
        if estimate - after < MIN_SAVING * estimate:
            self._tripped_in = ctx.prompt_id
            ctx.meta["budget"]["summary_failed"] = f"it saved under {MIN_SAVING:.0%}"
            return
        pending.info.update(tokens_before=estimate, tokens_after=after)
        ctx.messages[:] = new_messages
        ctx.rewritten = True
        ctx.summary = pending
        # The figures said when it started ("summarising N earlier messages (about T tokens)"):
        # the notice after it says the same N and T.
        ctx.meta["budget"].update(tokens=after, summarised=pending.info["messages"],
                                  summary_tokens_before=pending.info["tokens"])

    async def summarise(self, messages: list[Message], cfg: Config, provider: ProviderSpec | None, keep: int,
                        meta: dict[str, Any], focus: str = "",
                        trigger: str = "manual") -> tuple[list[Message], PendingSummary] | None:
        """Summarise what comes before the recent ``keep`` tokens of ``messages`` (as sent, system
        message first): the new list and the summary, or None (nothing to summarise, or it failed;
        ``meta["budget"]["summary_failed"]`` says why)."""
        if self._summary_model is None:
            return None
        head = _system_head(messages)
        cut = choose_cut(messages, head, keep, self.estimator.scale)
        older = messages[head:cut]
        if cut is None or not _worth_summarising(older):
            meta.setdefault("budget", {})["summary_failed"] = "there are no older turns to summarise"
            return None
        older_tokens = sum(message_tokens(m) for m in older)
        if not focus and older_tokens < MIN_SAVING * sum(message_tokens(m) for m in messages):
            # Even a summary of nothing could not save 5%: no model call (the prompt itself is the bulk).
            meta.setdefault("budget", {})["summary_failed"] = "the older turns are too small to save much"
            return None
        # Counted once, for every line that names them: an earlier summary's pair (summarised
        # again with them) is not one of the conversation's messages; tokens as the budget counts.
        count = sum(1 for m in older if not _is_summary_pair(m))
        tokens = self.estimator.scale(older_tokens)
        try:
            if self._before_summary is not None:  # a hook saying "continue": false stops this summary
                await self._before_summary(trigger, focus)
            call, window = self._summary_model(cfg, provider)  # a bad SUMMARY_MODEL is said, not fatal
            self._announce(f"context: summarising {count} earlier messages (about {tokens:,} tokens)…")
            summary = await summarise(older, call, window, focus)
        except (SummaryFailed, TmgError) as exc:
            meta.setdefault("budget", {})["summary_failed"] = str(exc)
            return None
        first_kept = messages[cut] if cut < len(messages) else None
        record = {"role": "summary", "content": summary.text}
        head_messages = summary_messages(record, first_kept.get("role", "user") if first_kept else "user")
        info = {"messages": count, "tokens": tokens, "model": summary.model,
                "pieces": summary.pieces, "focus": focus,
                "usage": {"in": summary.usage.prompt_tokens, "out": summary.usage.completion_tokens,
                          "cost": summary.usage.cost} if summary.usage.reported else None}
        return messages[:head] + head_messages + messages[cut:], PendingSummary(summary, first_kept, info)

    def _body(self, messages: list[Message], head: int) -> int:
        """Raw tokens of the messages after the system head; only new ones are measured."""
        start = self._seen.unchanged(messages, head)
        if start == 0:
            self._body_raw = 0
        self._body_raw += sum(message_tokens(m) for m in messages[head + start:])
        self._seen.mark(messages, head)
        return self._body_raw


def prune_tool_outputs(messages: list[Message], head: int, scale: Callable[[int], int], keep: int) -> tuple[int, int]:
    """Replace long tool outputs older than the recent ``keep`` tokens with a stub, in place
    (new dicts: the stored ones are untouched). Returns (raw tokens saved, outputs cut)."""
    protected = _recent_start(messages, head, keep, scale)
    names = _call_names(messages[head:protected])
    saved = count = 0
    for i in range(head, protected):
        m = messages[i]
        if m.get("role") != "tool" or not isinstance(m.get("content"), str) or len(m["content"]) < _PRUNE_FROM_CHARS:
            continue
        name, args = names.get(m.get("tool_call_id"), ("a tool", ""))
        stub = (f"[tool output cut by tmg to save context: {len(m['content']):,} characters from {name}"
                f"{' ' + args if args else ''}; call the tool again if you need it]")
        replacement = {**m, "content": stub}
        saved += message_tokens(m) - message_tokens(replacement)
        messages[i] = replacement
        count += 1
    return saved, count


def choose_cut(messages: list[Message], head: int, keep: int, scale: Callable[[int], int]) -> int | None:
    """Where the verbatim part starts: the earliest turn boundary whose tail fits in ``keep``
    tokens, else the latest boundary. A boundary is a user message, or an assistant message
    right after tool results (inside a tool loop): never between a call and its results."""
    boundaries = [i for i in range(head + 1, len(messages)) if _boundary(messages, i)]
    if not boundaries:
        return None
    start = _recent_start(messages, head, keep, scale)
    for b in boundaries:
        if b >= start:
            return b
    return boundaries[-1]


def _boundary(messages: list[Message], i: int) -> bool:
    role = messages[i].get("role")
    if role == "user":
        return True
    return role == "assistant" and messages[i - 1].get("role") == "tool"


def _recent_start(messages: list[Message], head: int, keep: int, scale: Callable[[int], int]) -> int:
    """The index from which the latest messages total at most ``keep`` tokens (always the last one)."""
    total = 0
    i = len(messages)
    while i > head + 1:
        total += scale(message_tokens(messages[i - 1]))
        if total > keep and i < len(messages):
            break
        i -= 1
    return i


def _call_names(messages: list[Message]) -> dict[str, tuple[str, str]]:
    out = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            fn = call.get("function") or {}
            args = str(fn.get("arguments") or "")
            out[call.get("id")] = (str(fn.get("name") or "a tool"), args if len(args) <= 120 else args[:117] + "...")
    return out


def _system_head(messages: list[Message]) -> int:
    head = 0
    while head < len(messages) and messages[head].get("role") == "system":
        head += 1
    return head


def _is_summary_pair(m: Message) -> bool:
    from tmg.session.history import SUMMARY_ACK, SUMMARY_HEADING

    content = m.get("content")
    return isinstance(content, str) and (content == SUMMARY_ACK or content.startswith(SUMMARY_HEADING))


def _worth_summarising(older: list[Message]) -> bool:
    """Something besides an earlier summary (re-summarising only it would save nothing)."""
    return any(not _is_summary_pair(m) for m in older)
