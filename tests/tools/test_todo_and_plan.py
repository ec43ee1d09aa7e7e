"""todo_write's list (kept beside the history) and exit_plan_mode's outcomes, with the work notes
that carry plan mode and the list to the model."""

from __future__ import annotations

from tmg.config.model import Config
from tmg.context.pipeline import TurnContext
from tmg.context.work_notes import PLAN_MODE_FOR_MODEL, WorkNotes
from tmg.tools.plan import ExitPlanModeTool, PlanDecision
from tmg.tools.todo import TodoList, TodoWriteTool

ITEMS = [{"content": "read the parser", "status": "completed"}, {"content": "fix it", "status": "in_progress"}]


async def test_the_list_is_kept_beside_the_history_and_a_torn_last_line_costs_only_itself(tmp_path):
    shown: list[list[str]] = []
    tool = TodoWriteTool(TodoList(tmp_path), show=shown.append)
    result = await tool.run({"todos": ITEMS})
    assert result.content == "todo list updated (1 of 2 done):\n[x] read the parser\n[~] fix it"
    assert shown == [["[x] read the parser", "[~] fix it"]]
    with (tmp_path / "todos.jsonl").open("a") as f:
        f.write('{"ts": 1, "todos": [{"content": "half')  # a crash mid-write
    assert TodoList(tmp_path).lines() == ["[x] read the parser", "[~] fix it"]
    bad = await tool.run({"todos": [{"content": "x", "status": "done"}]})
    assert bad.is_error and "item 1 needs a content and a status" in bad.content


async def test_the_work_notes_ride_only_when_needed():
    todos = TodoList(None)
    todos.replace(ITEMS)
    mode = ["plan"]
    notes = WorkNotes(lambda: mode[0], todos.for_model)
    ctx = TurnContext([{"role": "user", "content": "go"}], Config(), 1, 1)
    await notes.apply(ctx)
    assert PLAN_MODE_FOR_MODEL in ctx.messages[-1]["content"] and "[~] fix it" in ctx.messages[-1]["content"]
    seen = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "function": {"name": "todo_write"}}]}]
    mode[0] = "default"
    ctx = TurnContext(list(seen), Config(), 1, 2)
    await notes.apply(ctx)
    assert ctx.messages == seen  # the model can see its own call: nothing rides


async def test_exit_plan_mode_approved_switches_the_mode_and_in_a_one_shot_ends_the_prompt():
    switched, printed, said = [], [], []
    mode = ["plan"]

    async def approve(plan: str) -> PlanDecision:
        return PlanDecision(True, "accept-edits", plan + "\n3. and test it", edited=True)

    tool = ExitPlanModeTool(lambda: mode[0], lambda m, why: switched.append((m, why)), approve, printed.append,
                            said.append)
    result = await tool.run({"plan": "1. a\n2. b"})
    assert switched == [("accept-edits", "the approved plan")]
    assert "approved the plan after editing it" in result.content and "3. and test it" in result.content
    oneshot = ExitPlanModeTool(lambda: "plan", lambda m, why: None, None, printed.append, said.append)
    ended = await oneshot.run({"plan": "1. a"})
    assert ended.ends_prompt and printed == ["1. a"] and "tmg --permissions accept-edits" in said[0]
    mode[0] = "default"
    assert (await tool.run({"plan": "x"})).is_error
