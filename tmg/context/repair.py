"""Priority 0: a stored tool call without its result (tmg stopped mid-tool) gets an error result."""

from __future__ import annotations

from tmg.context.incremental import SeenPrefix
from tmg.context.pipeline import TurnContext

INTERRUPTED_TOOL = "error: this tool call never finished (tmg stopped while it ran); its result is unknown"


class RepairTransformer:
    name = "repair"
    priority = 0

    def __init__(self) -> None:
        self._seen = SeenPrefix()

    async def apply(self, ctx: TurnContext) -> None:
        messages = ctx.messages
        # A turn appends a call together with its results, so an already examined prefix has
        # none missing: only messages appended since then can hold a dangling call.
        start = self._seen.unchanged(messages)
        tail = messages[start:]
        answered = {m.get("tool_call_id") for m in tail if m.get("role") == "tool"}
        repaired: list = []
        changed = False
        for m in tail:
            repaired.append(m)
            if m.get("role") != "assistant" or not m.get("tool_calls"):
                continue
            for call in m["tool_calls"]:
                if call.get("id") not in answered:
                    repaired.append({"role": "tool", "tool_call_id": call.get("id"), "content": INTERRUPTED_TOOL})
                    changed = True
        if changed:
            messages[start:] = repaired
            ctx.request_persist()
        self._seen.mark(messages)
