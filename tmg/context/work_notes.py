"""Priority 105: notes on the work in hand, riding with the latest user message (never stored).

- In plan mode: that only reads run, and that the plan goes to the user with exit_plan_mode.
- The model's todo list, once its own todo_write calls are out of what it is sent (summarised
  away): the list is the session's (tmg.tools.todo), not the history's.
After the budget gatekeeper (80), so it sees what is really sent; riding with the latest user
message keeps every earlier message byte-identical (servers' prefix caches).
"""

from __future__ import annotations

from typing import Callable

from tmg.context.pipeline import TurnContext, with_riders

PLAN_MODE_FOR_MODEL = ("[tmg: plan mode. Only tools that read run now; writes and commands are refused. Look into "
                       "what you need, then call exit_plan_mode with your plan (the steps, the files you would "
                       "change); the user approves or edits it before anything changes.]")
TODO_TOOL = "todo_write"


class WorkNotes:
    name = "work notes"
    priority = 105

    def __init__(self, mode: Callable[[], str], todos: Callable[[], str]) -> None:
        self._mode = mode
        self._todos = todos

    async def apply(self, ctx: TurnContext) -> None:
        notes = [PLAN_MODE_FOR_MODEL] if self._mode() == "plan" else []
        todos = self._todos()
        if todos and not _todo_call_in(ctx.messages):
            notes.append(todos)
        if notes:
            ctx.messages[:] = with_riders(ctx.messages, notes)


def _todo_call_in(messages: list[dict]) -> bool:
    return any(call.get("function", {}).get("name") == TODO_TOOL
               for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or ())
