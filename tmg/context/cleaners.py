"""Priority 5: drop empty content parts and empty messages, which providers reject."""

from __future__ import annotations

from tmg.context.pipeline import TurnContext


class CleanersTransformer:
    name = "cleaners"
    priority = 5

    async def apply(self, ctx: TurnContext) -> None:
        cleaned = []
        for m in ctx.messages:
            content = m.get("content")
            if isinstance(content, list):
                parts = [p for p in content if not (isinstance(p, dict) and p.get("type") == "text" and not p.get("text"))]
                if len(parts) != len(content):
                    m = {**m, "content": parts}
                content = parts
            empty = not content and not m.get("tool_calls")
            if empty and m.get("role") in ("user", "assistant", "system"):
                continue
            cleaned.append(m)
        if len(cleaned) != len(ctx.messages) or any(a is not b for a, b in zip(cleaned, ctx.messages)):
            ctx.messages[:] = cleaned
