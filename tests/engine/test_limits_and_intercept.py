"""The Guard's limits (MAX_TURNS, MAX_BUDGET_USD, as flags or keys) and the Interceptor seam: a
blocked call never runs, a rewritten one is judged by the permission gate as rewritten, a prompt
goes on when the interceptor says why."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tmg.compose import build_pipeline
from tmg.config.live import LiveConfig
from tmg.config.model import Config
from tmg.engine.engine import PhaseEngine
from tmg.engine.hooks import HookSet
from tmg.engine.intercept import ToolCallVerdict
from tmg.errors import BudgetLimitError, HookStopError, TurnLimitError
from tmg.llm.gateway import Completion, ProviderSpec, ToolCallRequest, Usage
from tmg.permissions.action import PermissionGate, Verdict
from tmg.session.history import History
from tmg.tools.files import ReadFileTool, RootGuard
from tmg.tools.registry import ToolRegistry
from tests.doubles.model import FakeModel, text, tool_call
from tests.engine.test_engine import RecordingEvents, _no_sleep

SPEC = ProviderSpec(name="fake", model="fake/model")


class RecordingGate(PermissionGate):
    def __init__(self) -> None:
        self.judged: list[tuple[str, tuple[str, ...]]] = []

    async def check(self, action):
        self.judged.append((action.tool, action.paths))
        return Verdict(True, "allowed")


def engine_for(tmp_path, model, config: Config | None = None, interceptor=None, gate=None, live: LiveConfig | None = None):
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("bravo\n")
    live = live or LiveConfig(config or Config())
    events = RecordingEvents()
    engine = PhaseEngine(config=live.get, pipeline=build_pipeline(), history=History(tmp_path / "h.jsonl"),
                         tools=ToolRegistry([ReadFileTool(RootGuard([tmp_path]))], gate=gate),
                         hooks=HookSet(), events=events, gateway_for=lambda cfg: (SPEC, model), session_id="s",
                         sleep=_no_sleep, interceptor=interceptor)
    return engine, events


def priced_call(cost: float | None) -> Completion:
    return Completion("", [ToolCallRequest("c1", "read_file", json.dumps({"path": "a.txt"}))], Usage(10, 5, cost))


async def test_max_turns_from_the_flag_names_the_flag(tmp_path):
    model = FakeModel(tool_call("read_file", {"path": "a.txt"}), repeat_last=True)
    engine, _ = engine_for(tmp_path, model, live=LiveConfig(Config(max_turns=50), max_turns=2))
    with pytest.raises(TurnLimitError, match=r"stopped after --max-turns \(2\) model calls.*raise --max-turns if"):
        await engine.run_prompt("loop")
    assert model.calls == 2


async def test_the_budget_stops_before_the_next_call_once_reached(tmp_path):
    model = FakeModel(priced_call(0.4), priced_call(0.4), text("never"))
    engine, _ = engine_for(tmp_path, model, live=LiveConfig(Config(), max_budget_usd=0.75))
    with pytest.raises(BudgetLimitError, match=r"after 2 model calls.*cost \$0\.8000, reaching --max-budget-usd \(\$0\.75\)"):
        await engine.run_prompt("spend")
    assert model.calls == 2


async def test_a_final_answer_within_the_budget_is_not_stopped(tmp_path):
    model = FakeModel(priced_call(0.1), text("done", cost=5.0))
    engine, _ = engine_for(tmp_path, model, Config(max_budget_usd=0.5))
    assert (await engine.run_prompt("q")).text == "done"  # the cap is checked before each call


async def test_an_unpriced_model_is_said_once_and_not_capped(tmp_path):
    model = FakeModel(priced_call(None), priced_call(None), text("done"))
    engine, events = engine_for(tmp_path, model, Config(max_budget_usd=0.01))
    assert (await engine.run_prompt("q")).text == "done"
    said = [n for n in events.notices if "cannot be checked" in n]
    assert len(said) == 1 and said[0].startswith("MAX_BUDGET_USD $0.01 cannot be checked")


class Scripted:
    """An interceptor doing what a test says: block or rewrite a tool call, go on once at the end."""

    def __init__(self, block: str | None = None, rewrite: dict | None = None, go_on: str | None = None) -> None:
        self.block, self.rewrite, self.go_on = block, rewrite, go_on
        self.after: list[tuple[str, str]] = []
        self.stops: list[bool] = []

    async def before_tool(self, call, turn):
        if self.block:
            return ToolCallVerdict(call.arguments, blocked=self.block)
        return ToolCallVerdict(json.dumps(self.rewrite) if self.rewrite else call.arguments, context="ctx-before")

    async def after_tool(self, call, arguments, result, turn):
        self.after.append((arguments, result.content))
        return "ctx-after"

    async def before_stop(self, turn):
        self.stops.append(turn.index)
        return None if turn.index > 1 or not self.go_on else self.go_on


async def test_a_blocked_call_never_reaches_the_gate_and_the_model_reads_why(tmp_path):
    gate, hooks = RecordingGate(), Scripted(block="no reading today")
    model = FakeModel(tool_call("read_file", {"path": "a.txt"}), text("ok"))
    engine, events = engine_for(tmp_path, model, interceptor=hooks, gate=gate)
    await engine.run_prompt("read a")
    assert gate.judged == [] and hooks.after == []
    tool_message = model.sent_messages(1)[-1]
    assert tool_message["content"] == "error: blocked by a hook: no reading today"
    assert events.tools[0][2] is True  # an error result


async def test_a_rewritten_call_is_judged_and_run_as_rewritten_and_the_model_is_told(tmp_path):
    gate, hooks = RecordingGate(), Scripted(rewrite={"path": "b.txt"})
    model = FakeModel(tool_call("read_file", {"path": "a.txt"}), text("ok"))
    engine, _ = engine_for(tmp_path, model, interceptor=hooks, gate=gate)
    await engine.run_prompt("read a")
    assert gate.judged == [("read_file", (str(tmp_path / "b.txt"),))]
    content = model.sent_messages(1)[-1]["content"]
    assert "bravo" in content and "alpha" not in content
    assert '[a hook changed the arguments of this call to: {"path": "b.txt"}]' in content
    assert content.index("ctx-before") < content.index("ctx-after")


async def test_the_interceptor_may_have_a_prompt_go_on_once(tmp_path):
    hooks = Scripted(go_on="run the tests first")
    model = FakeModel(text("done"), text("tests pass, done"))
    engine, _ = engine_for(tmp_path, model, interceptor=hooks)
    result = await engine.run_prompt("fix it")
    assert result.text == "tests pass, done" and result.turns == 2
    assert hooks.stops == [1, 2]
    assert model.sent_messages(1)[-1] == {"role": "user", "content": "run the tests first"}


async def test_an_interceptor_that_stops_fails_the_prompt_with_its_line(tmp_path):
    class Stopper(Scripted):
        async def before_tool(self, call, turn):
            raise HookStopError("stopped by a PreToolUse hook: out of office")

    model = FakeModel(tool_call("read_file", {"path": "a.txt"}), text("never"))
    engine, _ = engine_for(tmp_path, model, interceptor=Stopper())
    with pytest.raises(HookStopError, match="out of office"):
        await engine.run_prompt("q")
    assert model.calls == 1


def test_limits_are_read_live_so_a_reload_keeps_the_flag(tmp_path):
    live = LiveConfig(Config(max_turns=5), max_turns=2, max_budget_usd=1.5)
    live.swap(replace(Config(), max_turns=9, max_budget_usd=None))
    assert (live.get().max_turns, live.get().max_budget_usd) == (2, 1.5)
    assert live.get().origin("MAX_BUDGET_USD") == "--max-budget-usd"
