"""The context pipeline: ordering, distinct priorities, canonical vs transient, each transformer."""

from __future__ import annotations

import pytest

from tmg.compose import build_pipeline
from tmg.config.model import Config
from tmg.context.alternation import UNANSWERED
from tmg.context.pipeline import Pipeline, TurnContext
from tmg.context.repair import INTERRUPTED_TOOL
from tmg.context.validator import ContextLimitError


class Mark:
    def __init__(self, name: str, priority: int, log: list) -> None:
        self.name, self.priority, self._log = name, priority, log

    async def apply(self, ctx: TurnContext) -> None:
        self._log.append(self.name)
        ctx.messages.append({"role": "user", "content": self.name})


def ctx(messages, **config) -> TurnContext:
    return TurnContext(list(messages), Config(**config), prompt_id=1, turn=1)


async def test_runs_in_ascending_priority_and_transient_edits_stay_out_of_canonical():
    log: list[str] = []
    pipeline = Pipeline([Mark("late", 120, log), Mark("early", 5, log), Mark("mid", 50, log)])
    refined = await pipeline.run(ctx([]))
    assert log == ["early", "mid", "late"]
    assert [m["content"] for m in refined.canonical] == ["early", "mid"]
    assert [m["content"] for m in refined.payload] == ["early", "mid", "late"]
    assert refined.persist is False


def test_equal_priorities_are_a_startup_error():
    with pytest.raises(ValueError, match="share priority 15"):
        Pipeline([Mark("a", 15, []), Mark("b", 15, [])])


def test_the_shipped_pipeline_has_the_spec_priorities():
    assert build_pipeline().names() == ["0:repair", "5:cleaners", "6:alternation", "8:persona", "80:budget", "110:notices",
                                      "120:pruner", "130:final-validator"]


async def test_repair_answers_a_dangling_tool_call_and_asks_to_persist():
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}
    refined = await build_pipeline().run(ctx([{"role": "user", "content": "q"}, call, {"role": "user", "content": "again"}]))
    roles = [m["role"] for m in refined.canonical]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert refined.canonical[3] == {"role": "tool", "tool_call_id": "c1", "content": INTERRUPTED_TOOL}
    assert refined.persist is True


async def test_cleaners_drop_empty_messages_without_persisting():
    refined = await build_pipeline().run(ctx([{"role": "user", "content": "q"}, {"role": "assistant", "content": ""},
                                              {"role": "user", "content": "q2"}]))
    # The empty answer is dropped; the two prompts left in a row get a marker answer between them.
    assert [m["content"] for m in refined.payload[1:]] == ["q", UNANSWERED, "q2"]
    assert refined.persist is False


async def test_an_unanswered_prompt_gets_a_marker_answer_in_the_payload_only():
    stored = [{"role": "user", "content": "q1"}, {"role": "user", "content": "q2"},
              {"role": "assistant", "content": "a2"}, {"role": "user", "content": "q3"}]
    pipeline = build_pipeline()
    for _ in range(2):  # the second turn finds the gap from memory, not by a rescan
        refined = await pipeline.run(ctx(list(stored)))
        assert [m["role"] for m in refined.payload[1:]] == ["user", "assistant", "user", "assistant", "user"]
        assert refined.payload[2]["content"] == UNANSWERED
        assert refined.persist is False and len(stored) == 4


async def test_persona_comes_from_person_and_mode_and_is_replaced_not_stacked():
    messages = [{"role": "system", "content": "old prompt"}, {"role": "user", "content": "q"}]
    refined = await build_pipeline().run(ctx(messages, person="You are a pirate.", mode="sea"))
    systems = [m for m in refined.payload if m["role"] == "system"]
    assert len(systems) == 1 and systems[0]["content"].startswith("You are a pirate.") and "sea" in systems[0]["content"]


async def test_pruner_windows_the_payload_only():
    messages = []
    for i in range(5):
        messages += [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]
    refined = await build_pipeline().run(ctx(messages, max_history_turns=2))
    assert [m["content"] for m in refined.payload[1:]] == ["q3", "a3", "q4", "a4"]
    assert len(refined.canonical) == 11  # system + all ten stored messages


async def test_validator_refuses_a_payload_over_the_limit_with_a_clear_error():
    big = [{"role": "user", "content": "x" * 8000}]
    with pytest.raises(ContextLimitError, match="window of 1,000; run /compact.*/new"):
        await build_pipeline().run(ctx(big, max_history_tokens=1000))


async def test_transformers_keep_their_verdicts_as_history_grows():
    """Turn after turn on the same growing list (as the engine does): nothing is re-examined
    from scratch, and nothing already decided is forgotten."""
    from tmg.context.cleaners import CleanersTransformer
    from tmg.context.repair import RepairTransformer
    from tmg.context.validator import FinalValidator

    stored = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": ""},
              {"role": "tool", "tool_call_id": "ghost", "content": "orphan"}]
    pipeline = Pipeline([RepairTransformer(), CleanersTransformer(), FinalValidator()])
    for turn in range(3):
        refined = await pipeline.run(TurnContext(list(stored), Config(max_history_tokens=1000), 1, turn))
        # The empty answer and the orphan result are dropped every turn, not just the first.
        assert [m["content"] for m in refined.payload] == [f"q{i + 1}" for i in range(turn + 1)]
        stored.append({"role": "user", "content": f"q{turn + 2}"})
    # A dangling call appended later is still found and answered.
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}
    stored += [call, {"role": "user", "content": "after crash"}]
    refined = await pipeline.run(TurnContext(list(stored), Config(), 1, 4))
    assert refined.persist and refined.canonical[-2]["tool_call_id"] == "c9"
    # The running estimate still crosses the limit when enough is appended.
    stored.append({"role": "user", "content": "z" * 8000})
    with pytest.raises(ContextLimitError):
        await pipeline.run(TurnContext(list(stored), Config(max_history_tokens=1000), 1, 5))


def test_a_brief_goes_as_a_system_message_before_the_latest_user_turn_and_a_rider_after_its_text():
    from tmg.context.pipeline import Brief, with_riders

    history = [{"role": "system", "content": "P."}, {"role": "user", "content": "q1"},
               {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"},
               {"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}]},
               {"role": "tool", "tool_call_id": "c1", "content": "r"}]
    payload = with_riders(history, [Brief("notes"), "[notice]"])
    assert payload[:3] == history[:3] and payload[-2:] == history[-2:]  # the earlier prefix, the tool round
    assert payload[3:5] == [{"role": "system", "content": "notes"}, {"role": "user", "content": "q2\n\n[notice]"}]
    assert history[3] == {"role": "user", "content": "q2"}  # replaced, not mutated
