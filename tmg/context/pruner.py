"""Priority 120: the MAX_HISTORY_TURNS window, for the payload only (never the stored history)."""

from __future__ import annotations

from tmg.context.pipeline import TurnContext


class PrunerTransformer:
    name = "pruner"
    priority = 120

    async def apply(self, ctx: TurnContext) -> None:
        # A context overflow is the budget gatekeeper's (priority 80), not a reason to drop turns here.
        window = ctx.config.max_history_turns
        if window <= 0:
            return
        starts = [i for i, m in enumerate(ctx.messages) if m.get("role") == "user"]
        if len(starts) <= window:
            return
        cut = starts[-window]
        head = [m for m in ctx.messages[:cut] if m.get("role") == "system"]
        ctx.messages[:] = head + ctx.messages[cut:]
