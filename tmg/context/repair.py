"""Priority 0: a stored tool call without its result (tmg stopped mid-tool) gets an error result."""

from __future__ import annotations

from tmg.context.pipeline import TurnContext

INTERRUPTED_TOOL = "error: this tool call never finished (tmg stopped while it ran); its result is unknown"


class RepairTransformer:
    name = "repair"
    priority = 0

    async def apply(self, ctx: TurnContext) -> None:
        answered = {m.get("tool_call_id") for m in ctx.messages if m.get("role") == "tool"}
        repaired: list = []
        changed = False
        for i, m in enumerate(ctx.messages):
            repaired.append(m)
            if m.get("role") != "assistant" or not m.get("tool_calls"):
                continue
            for call in m["tool_calls"]:
                if call.get("id") not in answered:
                    repaired.append({"role": "tool", "tool_call_id": call.get("id"), "content": INTERRUPTED_TOOL})
                    changed = True
        if changed:
            ctx.messages[:] = repaired
            ctx.request_persist()
