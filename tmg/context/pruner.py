"""Priority 120: the MAX_HISTORY_TURNS window, for the payload only (never the stored history)."""

from __future__ import annotations

from tmg.context.pipeline import TurnContext


class PrunerTransformer:
    name = "pruner"
    priority = 120

    async def apply(self, ctx: TurnContext) -> None:
        window = ctx.config.max_history_turns
        if ctx.force_compact:  # a context overflow: send half of what we would otherwise send
            user_turns = sum(1 for m in ctx.messages if m.get("role") == "user")
            window = max(1, (window or user_turns) // 2)
        if window <= 0:
            return
        starts = [i for i, m in enumerate(ctx.messages) if m.get("role") == "user"]
        if len(starts) <= window:
            return
        cut = starts[-window]
        head = [m for m in ctx.messages[:cut] if m.get("role") == "system"]
        ctx.messages[:] = head + ctx.messages[cut:]
