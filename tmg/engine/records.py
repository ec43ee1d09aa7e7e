"""What the PERSISTING phase stores for a model call: the assistant message with its meta."""

from __future__ import annotations

from typing import Any

from tmg.engine.turn import Turn
from tmg.llm.gateway import Completion


def assistant_message(turn: Turn, completion: Completion) -> dict[str, Any]:
    """The history entry of one model call: its text, tool calls and where it came from, with its
    usage (unknown kept as None, never as zero)."""
    # "" rather than null beside tool calls: OpenAI accepts both, llama.cpp's server rejects null.
    message: dict[str, Any] = {"role": "assistant", "content": completion.text}
    if completion.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in completion.tool_calls
        ]
    meta = {"turn": turn.index, "model": turn.model, "provider": turn.provider, **turn.meta}
    usage = completion.usage
    if usage.reported:
        meta["usage"] = {"in": usage.prompt_tokens, "out": usage.completion_tokens, "cost": usage.cost}
    else:
        meta["usage"] = {"in": None, "out": None, "cost": None}
    message["meta"] = meta
    return message
