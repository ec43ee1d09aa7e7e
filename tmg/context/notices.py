"""Priority 110: transient notices, for the model (riding with the prompt, never stored) and for
the user (stderr and the transcript), from what the stages before found this turn.

For the model, only what changes how it should answer: the earlier conversation was just
summarised; long-term memory was unavailable this turn. For the user: the context is nearly
full (with the figure), it was summarised or pruned (how much), a summary failed (why).
Each user notice is said at most once per prompt.
"""

from __future__ import annotations

from tmg.context.pipeline import TurnContext, with_riders

SUMMARISED_FOR_MODEL = ("[tmg notice: the earlier conversation was just summarised to fit the context window; "
                        "the summary at the start stands for it. If a detail you need is missing, ask the user.]")
MEMORY_UNAVAILABLE_FOR_MODEL = ("[tmg notice: long-term memory was unavailable this turn, so no notes from earlier "
                                "sessions were recalled.]")


class TransientNotices:
    name = "notices"
    priority = 110

    def __init__(self) -> None:
        self._said: set[tuple[int, str]] = set()  # (prompt id, kind) already told the user

    async def apply(self, ctx: TurnContext) -> None:
        budget = ctx.meta.pop("budget", None) or {}
        memory_down = ctx.meta.pop("memory_unavailable", None)
        for_model: list[str] = []
        if ctx.summary is not None:
            for_model.append(SUMMARISED_FOR_MODEL)
            self._tell(ctx, "summarised", _summarised(budget))
        elif budget.get("pruned"):
            self._tell(ctx, "pruned", f"context: cut {budget['pruned']} old tool output"
                       f"{'' if budget['pruned'] == 1 else 's'} (about {budget['pruned_tokens']:,} tokens) from what is "
                       "sent; history keeps them")
        if budget.get("summary_failed"):
            self._tell(ctx, "failed", f"context: not summarised ({budget['summary_failed']}); "
                       "not retried for this prompt")
        tokens, threshold, window = budget.get("tokens", 0), budget.get("threshold", 0), budget.get("window", 0)
        if threshold and tokens > threshold:
            self._tell(ctx, "full", f"context nearly full: about {tokens:,} of {window:,} tokens "
                       f"({tokens / window:.0%} of the model's window); /compact summarises older turns, /new starts "
                       "a new session")
        if memory_down:
            for_model.append(MEMORY_UNAVAILABLE_FOR_MODEL)
        if for_model:
            ctx.messages[:] = with_riders(ctx.messages, for_model)

    def _tell(self, ctx: TurnContext, kind: str, text: str) -> None:
        key = (ctx.prompt_id, kind)
        if key not in self._said:
            self._said.add(key)
            ctx.notices.append(text)


def _summarised(budget: dict) -> str:
    before, after = budget.get("summary_tokens_before", 0), budget.get("tokens", 0)
    return (f"context summarised: {budget.get('summarised', 0)} earlier messages (about {before:,} tokens) now sent "
            f"as a summary; the request is about {after:,} tokens (the originals stay in the transcript: tmg -t)")
