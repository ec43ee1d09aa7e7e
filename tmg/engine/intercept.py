"""The Interceptor seam: what may stop or change the engine's course, where the in-process Hooks
(tmg.engine.hooks) only watch. A tool call before it runs (block it, rewrite its arguments), its
result after (add to what the model reads), and a prompt's final answer (go on instead). The
command hooks of HOOKS (tmg.hooks) implement it; a session without any passes None.

A rewritten call still goes through the registry's permission gate: what runs is what is judged.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from tmg.engine.turn import Turn
from tmg.llm.gateway import ToolCallRequest
from tmg.tools.registry import ToolRegistry, ToolResult


class ToolCallVerdict(NamedTuple):  # not a dataclass: cheaper to define on every one-shot's path
    arguments: str  # the JSON text of the call to run: the model's own, or a rewrite
    blocked: str | None = None  # why the call does not run: the model reads it as the call's error
    context: str = ""  # said to the model with the call's result


class Interceptor(Protocol):
    async def before_tool(self, call: ToolCallRequest, turn: Turn) -> ToolCallVerdict:
        """Run, block or rewrite ``call``; raise TmgError to stop the prompt."""
        ...

    async def after_tool(self, call: ToolCallRequest, arguments: str, result: ToolResult, turn: Turn) -> str:
        """Text to add to ``result`` for the model ("" for none); raise TmgError to stop the prompt."""
        ...

    async def before_stop(self, turn: Turn) -> str | None:
        """Why the prompt should go on after ``turn``'s final answer (None: it ends); the model
        reads it as its next instruction. MAX_TURNS bounds a prompt that always goes on."""
        ...


async def run_tool_call(tools: ToolRegistry, interceptor: Interceptor | None, call: ToolCallRequest, turn: Turn,
                        timeout: float) -> ToolResult:
    """One tool call through ``interceptor`` (if any) and the registry (which judges it)."""
    if interceptor is None:
        return await tools.call(call.name, call.arguments, timeout)
    verdict = await interceptor.before_tool(call, turn)
    if verdict.blocked is not None:
        return _noted(ToolResult(f"error: blocked by a hook: {verdict.blocked}", is_error=True), verdict.context)
    result = await tools.call(call.name, verdict.arguments, timeout)
    notes = [verdict.context]
    if verdict.arguments != call.arguments:
        notes.insert(0, f"[a hook changed the arguments of this call to: {verdict.arguments}]")
    notes.append(await interceptor.after_tool(call, verdict.arguments, result, turn))
    return _noted(result, *notes)


def _noted(result: ToolResult, *notes: str) -> ToolResult:
    extra = "\n\n".join(n for n in notes if n)
    if not extra:
        return result
    return ToolResult(f"{result.content}\n\n{extra}" if result.content else extra, result.is_error, result.images)
