"""exit_plan_mode: in plan mode the model looks around (only reads run), then proposes its plan
with this tool; the user approves it (or edits it) and picks the mode the work goes on in.

In the REPL the plan is put to the user (`PlanReview`, tmg.repl.plan_review): approved, the
session's permission mode becomes the one they chose and the model is told to carry it out; not
approved, plan mode goes on with their note. In a one-shot nobody can be asked: the plan is
printed on stdout, one line on stderr says how to go on, and the run ends there (the tool result
ends the prompt: no further model call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from tmg.permissions.action import ToolAction
from tmg.tools.registry import ToolResult

GO_ON = ('plan mode: the plan is above; to carry it out run  tmg --permissions accept-edits "go ahead with the plan"  '
         "(or --permissions default to be asked before each change); to change it, say so in plan mode")


@dataclass(frozen=True)
class PlanDecision:
    approved: bool
    mode: str = "default"  # the permission mode the work goes on in
    plan: str = ""  # as approved (the user may have edited it)
    edited: bool = False
    note: str = ""  # the user's words to the model (what to change, when not approved)


class PlanReview(Protocol):
    async def __call__(self, plan: str) -> PlanDecision: ...


class ExitPlanModeTool:
    name = "exit_plan_mode"
    description = ("In plan mode only: present your plan to the user for approval, in Markdown (the steps, the files "
                   "you would change, how you would check the result). Once the user approves it, plan mode ends "
                   "and you carry the plan out.")
    parameters = {
        "type": "object",
        "properties": {"plan": {"type": "string", "description": "The plan, in Markdown"}},
        "required": ["plan"],
    }

    def __init__(self, mode: Callable[[], str], set_mode: Callable[[str, str], None], review: PlanReview | None,
                 present: Callable[[str], None], say: Callable[[str], None]) -> None:
        """``review``: the REPL's question (None: a one-shot, which prints the plan with ``present``
        and says how to go on with ``say``)."""
        self._mode = mode
        self._set_mode = set_mode
        self._review = review
        self._present = present
        self._say = say

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        return ToolAction(self.name, "read")  # it only asks the user: allowed in plan mode

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        plan = str(arguments.get("plan", "")).strip()
        if self._mode() != "plan":
            return ToolResult("error: not in plan mode, so there is no plan to approve; go on with the task",
                              is_error=True)
        if not plan:
            return ToolResult("error: give the plan to show the user", is_error=True)
        if self._review is None:
            self._present(plan)
            self._say(GO_ON)
            return ToolResult("The plan was shown to the user; this run ends here. They approve it by running tmg "
                              "again in another permission mode.", ends_prompt=True)
        decision = await self._review(plan)
        if not decision.approved:
            said = f" They said: {decision.note}" if decision.note else " Ask them what to change."
            return ToolResult(f"The user did not approve the plan; plan mode goes on (only reads run).{said}")
        self._set_mode(decision.mode, "the approved plan")
        text = (f"The user approved the plan{' after editing it' if decision.edited else ''}. The permission mode is "
                f"now {decision.mode}: carry the plan out now, step by step, keeping the todo list current.")
        if decision.edited:
            text += f"\n\nThe plan as approved:\n{decision.plan}"
        return ToolResult(text)
