"""Priority 8: the system prompt, from PERSON and the mode.

The system message is built fresh each turn rather than stored, so a PERSON changed by hot
reload reaches the very next prompt. Later transformers (skills, memory) add their own parts.
"""

from __future__ import annotations

from tmg.context.pipeline import TurnContext

DEFAULT_PERSON = (
    "You are tmg, an assistant in the user's terminal. Answer directly and concisely; "
    "use Markdown where it helps. Use the tools when the answer depends on local files."
)


class PersonaTransformer:
    name = "persona"
    priority = 8

    async def apply(self, ctx: TurnContext) -> None:
        person = ctx.config.person.strip() or DEFAULT_PERSON
        if ctx.config.mode != "default":
            person += f"\n\nMode: {ctx.config.mode}."
        system = {"role": "system", "content": person}
        if ctx.messages and ctx.messages[0].get("role") == "system":
            ctx.messages[0] = system
        else:
            ctx.messages.insert(0, system)
