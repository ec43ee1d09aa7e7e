"""The phase engine, driven by a queue-driven fake model: what the model is sent, what is stored."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tmg.compose import build_pipeline
from tmg.config.model import CompactionConfig, Config
from tmg.engine.engine import PhaseEngine
from tmg.engine.events import NullEvents
from tmg.engine.hooks import HookSet
from tmg.engine.loops import CORRECTION
from tmg.engine.phases import Phase
from tmg.errors import TmgError, TurnLimitError
from tmg.context.gatekeeper import BudgetGatekeeper
from tmg.context.summary import SYSTEM_PROMPT, SummaryReply
from tmg.context.tokens import TokenEstimator
from tmg.llm.gateway import CompletionRequest, ErrorKind, GatewayError, ProviderSpec
from tmg.session.history import SUMMARY_HEADING
from tmg.session.history import History
from tmg.tools.files import ListFolderTool, ReadFileTool, RootGuard
from tmg.tools.registry import ToolRegistry
from tests.doubles.model import FakeModel, text, tool_call
from tests.support.gates import ALLOW

SPEC = ProviderSpec(name="fake", model="fake/model")


class RecordingEvents(NullEvents):
    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.notices: list[str] = []
        self.tools: list[tuple[str, str, bool]] = []

    def on_text(self, delta: str) -> None:
        self.deltas.append(delta)

    def on_notice(self, message: str) -> None:
        self.notices.append(message)

    def on_tool(self, name, arguments, result) -> None:
        self.tools.append((name, arguments, result.is_error))


class Holder:
    def __init__(self, config: Config) -> None:
        self.config = config

    def get(self) -> Config:
        return self.config


def summary_model_of(model: FakeModel, window: int = 100_000):
    """The gatekeeper's summary model: the same fake, as compose wires the chat's own model."""
    def for_config(_config, _provider):
        async def call(messages):
            completion = await model.complete(CompletionRequest(SPEC, messages), lambda _d: None)
            return SummaryReply(completion.text, completion.usage, SPEC.model, window)
        return call, window
    return for_config


def make_engine(tmp_path, model: FakeModel, config: Config | None = None, hooks: HookSet | None = None,
                announce=lambda _text: None):
    (tmp_path / "notes.txt").write_text("the secret word is avocado\n")
    holder = Holder(config or Config())
    events = RecordingEvents()
    budget = BudgetGatekeeper(TokenEstimator(), summary_model_of(model), announce=announce)
    engine = PhaseEngine(
        config=holder.get,
        pipeline=build_pipeline(budget=budget),
        budget=budget,
        history=History(tmp_path / "history.jsonl"),
        tools=ToolRegistry([ReadFileTool(RootGuard([tmp_path])), ListFolderTool(RootGuard([tmp_path]))], gate=ALLOW),
        hooks=hooks or HookSet(),
        events=events,
        gateway_for=lambda cfg: (SPEC, model),
        session_id="s1",
        sleep=_no_sleep,
    )
    return engine, events, holder


async def _no_sleep(_seconds: float) -> None:
    return None


async def test_text_answer_is_streamed_and_stored(tmp_path):
    model = FakeModel(text("hello there friend"))
    engine, events, _ = make_engine(tmp_path, model)
    result = await engine.run_prompt("hi")
    assert result.text == "hello there friend"
    assert "".join(events.deltas) == "hello there friend"
    roles = [(m["role"], m.get("content")) for m in History(tmp_path / "history.jsonl").messages]
    assert roles == [("user", "hi"), ("assistant", "hello there friend")]
    sent = model.sent_messages()
    assert sent[0]["role"] == "system" and sent[-1] == {"role": "user", "content": "hi"}
    assert all("ts" not in m and "meta" not in m for m in sent)


async def test_tool_result_reaches_the_next_request(tmp_path):
    model = FakeModel(tool_call("read_file", {"path": "notes.txt"}), text("avocado"))
    engine, events, _ = make_engine(tmp_path, model)
    result = await engine.run_prompt("what is the word?")
    assert result.text == "avocado" and result.turns == 2
    second = model.sent_messages(1)
    assert second[-2]["tool_calls"][0]["function"]["name"] == "read_file"
    assert second[-1]["role"] == "tool" and "avocado" in second[-1]["content"]
    assert events.tools == [("read_file", '{"path": "notes.txt"}', False)]


async def test_max_turns_stops_an_endless_tool_loop(tmp_path):
    model = FakeModel(tool_call("read_file", {"path": "notes.txt"}), repeat_last=True)
    engine, _, _ = make_engine(tmp_path, model, Config(max_turns=3))
    with pytest.raises(TurnLimitError, match="MAX_TURNS \\(3\\)"):
        await engine.run_prompt("loop")
    assert model.calls == 3


async def test_max_turns_is_reread_at_the_executing_boundary(tmp_path):
    model = FakeModel(tool_call("read_file", {"path": "notes.txt"}), repeat_last=True)
    engine, _, holder = make_engine(tmp_path, model, Config(max_turns=1))

    class RaiseLimit:
        def on_phase_transition(self, old, new, state):
            if new is Phase.INFERENCE:  # while the first model call runs, the file changes
                holder.config = replace(holder.config, max_turns=3)

    engine._hooks.register(RaiseLimit())
    with pytest.raises(TurnLimitError):
        await engine.run_prompt("loop")
    assert model.calls == 3


async def test_repeated_identical_tool_call_gets_a_correction(tmp_path):
    call = tool_call("read_file", {"path": "notes.txt"})
    model = FakeModel(call, call, text("done"))
    engine, events, _ = make_engine(tmp_path, model)
    await engine.run_prompt("read it")
    assert [t[2] for t in events.tools] == [False, True]
    assert model.sent_messages(2)[-1]["content"] == CORRECTION


async def test_rate_limit_is_retried_and_announced(tmp_path):
    model = FakeModel(GatewayError(ErrorKind.RATE_LIMIT, "rate limited (HTTP 429)", status=429), text("ok"))
    engine, events, _ = make_engine(tmp_path, model)
    assert (await engine.run_prompt("hi")).text == "ok"
    assert model.calls == 2
    assert len(events.notices) == 1 and "retry 1/4" in events.notices[0] and "429" in events.notices[0]


async def test_retries_are_bounded(tmp_path):
    model = FakeModel(GatewayError(ErrorKind.TRANSIENT, "server error (HTTP 500)"), repeat_last=True)
    engine, events, _ = make_engine(tmp_path, model)
    with pytest.raises(GatewayError):
        await engine.run_prompt("hi")
    assert model.calls == 5 and len(events.notices) == 4


async def test_auth_error_is_never_retried(tmp_path):
    model = FakeModel(GatewayError(ErrorKind.AUTH, "authentication failed"), text("never"))
    engine, events, _ = make_engine(tmp_path, model)
    with pytest.raises(GatewayError, match="authentication"):
        await engine.run_prompt("hi")
    assert model.calls == 1 and events.notices == []


async def test_empty_responses_are_retried_a_few_times(tmp_path):
    model = FakeModel(text(""), text("  "), text("finally"))
    engine, _, _ = make_engine(tmp_path, model)
    assert (await engine.run_prompt("hi")).text == "finally"
    model = FakeModel(text(""), repeat_last=True)
    engine, _, _ = make_engine(tmp_path, model)
    with pytest.raises(TmgError, match="empty response 3 times"):
        await engine.run_prompt("hi")


async def test_context_overflow_summarises_older_turns_once(tmp_path):
    overflow = GatewayError(ErrorKind.CONTEXT_OVERFLOW, "context length exceeded")
    model = FakeModel(text("a" * 2000), text("b" * 2000), text("c" * 2000), overflow,
                      text("## Goal and current task\nshort"), text("fits now"))
    engine, events, _ = make_engine(tmp_path, model)
    for q in ("one: never use tabs", "two", "three"):
        await engine.run_prompt(q)
    assert (await engine.run_prompt("four")).text == "fits now"
    assert model.sent_messages(4)[0]["content"] == SYSTEM_PROMPT  # the summary request
    compacted = model.sent_messages(5)
    assert compacted[1]["content"].startswith(SUMMARY_HEADING) and '"one: never use tabs"' in compacted[1]["content"]
    assert compacted[-1]["content"].startswith("four") and len(str(compacted)) < len(str(model.sent_messages(3)))
    assert any("summarising older turns" in n for n in events.notices)
    stored = History(tmp_path / "history.jsonl").messages
    assert [m["role"] for m in stored].count("summary") == 1 and len(stored) == 9  # the originals stay
    # Only once a prompt: a second overflow in the same prompt is one clear error.
    model.queue[:] = [overflow, text("second summary"), overflow, text("never sent")]
    with pytest.raises(GatewayError, match="still too long after summarising.*/new"):
        await engine.run_prompt("five")
    assert model.queue == [text("never sent")]


async def test_context_overflow_with_compaction_off_is_one_clear_error(tmp_path):
    overflow = GatewayError(ErrorKind.CONTEXT_OVERFLOW, "context length exceeded")
    model = FakeModel(text("a"), overflow, text("never sent"))
    engine, _, _ = make_engine(tmp_path, model, Config(compaction=CompactionConfig(enabled=False)))
    await engine.run_prompt("one")
    with pytest.raises(GatewayError, match="compaction is off.*/compact.*/new"):
        await engine.run_prompt("two")
    assert model.calls == 2  # no summary request, no second try


async def test_hooks_see_each_turn_and_a_failing_hook_does_not_fail_it(tmp_path):
    seen = []
    reports = []

    class Recorder:
        def before_turn(self, turn):
            seen.append(("before", turn.index))

        def after_turn(self, turn, error):
            seen.append(("after", turn.index, turn.response_text, type(error).__name__ if error else None))

    class Broken:
        def after_turn(self, turn, error):
            raise RuntimeError("hook bug")

    hooks = HookSet(report=reports.append)
    hooks.register(Recorder())
    hooks.register(Broken())
    model = FakeModel(tool_call("read_file", {"path": "notes.txt"}), text("fine"),
                      GatewayError(ErrorKind.AUTH, "bad key"))
    engine, _, _ = make_engine(tmp_path, model, hooks=hooks)
    assert (await engine.run_prompt("q")).text == "fine"
    with pytest.raises(GatewayError):
        await engine.run_prompt("q2")
    assert seen == [("before", 1), ("after", 1, "", None), ("before", 2), ("after", 2, "fine", None),
                    ("before", 1), ("after", 1, "", "GatewayError")]
    assert len(reports) == 3 and "hook bug" in reports[0]


async def test_each_turn_carries_what_was_typed_apart_and_the_answer_before_it(tmp_path):
    seen = []

    class Recorder:
        def after_turn(self, turn, error):
            seen.append((turn.prompt_id, turn.index, turn.user_text, turn.typed, turn.previous_answer))

    hooks = HookSet()
    hooks.register(Recorder())
    model = FakeModel(text("first answer"), tool_call("read_file", {"path": "notes.txt"}), text("second answer"))
    engine, _, _ = make_engine(tmp_path, model, hooks=hooks)
    await engine.run_prompt("summarise\n\nFrom now on, piped text.", typed_text="summarise")
    await engine.run_prompt("and now?")
    assert seen == [(1, 1, "summarise\n\nFrom now on, piped text.", "summarise", ""),
                    (2, 1, "and now?", "and now?", "first answer"), (2, 2, "and now?", "and now?", "first answer")]


def test_a_hook_registers_once():
    hooks = HookSet()
    hook = object()
    hooks.register(hook)
    with pytest.raises(ValueError):
        hooks.register(hook)


async def test_second_prompt_sends_the_first_exchange(tmp_path):
    model = FakeModel(text("first answer"), text("second answer"))
    engine, _, _ = make_engine(tmp_path, model)
    await engine.run_prompt("first")
    await engine.run_prompt("second")
    contents = [m.get("content") for m in model.sent_messages(1)[1:]]
    assert contents == ["first", "first answer", "second"]


async def test_a_cut_off_stream_is_retried_where_the_screen_can_show_it(tmp_path):
    from tests.doubles.model import CutOff

    drop = GatewayError(ErrorKind.TRANSIENT, "the connection dropped")
    model = FakeModel(CutOff("The answer is forty", drop), text("The answer is forty-two."))
    engine, events, _ = make_engine(tmp_path, model)
    assert (await engine.run_prompt("q")).text == "The answer is forty-two."
    assert model.calls == 2 and any("retry 1/" in n for n in events.notices)


async def test_a_cut_off_stream_into_a_pipe_fails_instead_of_writing_the_answer_twice(tmp_path):
    from tests.doubles.model import CutOff

    drop = GatewayError(ErrorKind.TRANSIENT, "the connection dropped")
    model = FakeModel(CutOff("The answer is forty", drop), text("never sent"))
    engine, events, _ = make_engine(tmp_path, model)
    engine.retry_after_partial = False
    with pytest.raises(GatewayError, match="cut off .*connection dropped"):
        await engine.run_prompt("q")
    assert model.calls == 1 and "".join(events.deltas) == "The answer is forty"
    # A drop before any text reached the user is still retried.
    model = FakeModel(drop, text("fine"))
    engine, _, _ = make_engine(tmp_path, model)
    engine.retry_after_partial = False
    assert (await engine.run_prompt("q")).text == "fine"


async def test_a_conversation_over_the_threshold_is_summarised_not_refused(tmp_path):
    model = FakeModel(text("a" * 2000), text("b" * 2000), text("c" * 2000), text("the summary"), text("still here"))
    engine, events, _ = make_engine(tmp_path, model, Config(max_history_tokens=1000))
    for q in ("one", "two", "three"):
        await engine.run_prompt(q)
    assert (await engine.run_prompt("four")).text == "still here"
    assert any(n.startswith("context summarised:") for n in events.notices)
    sent = model.sent_messages()
    assert sent[1]["content"].startswith(SUMMARY_HEADING) and sent[-1]["content"].startswith("four")


async def test_compact_reports_the_figures_it_announced(tmp_path):
    said: list[str] = []
    model = FakeModel(text("a" * 2000), text("b" * 2000), text("c" * 2000), text("the summary"))
    engine, _, _ = make_engine(tmp_path, model, announce=said.append)
    for q in ("one", "two", "three"):
        await engine.run_prompt(q)
    line = await engine.compact()
    (announced,) = said
    figures = announced.removeprefix("context: summarising ").removesuffix("…")  # "N earlier messages (about T tokens)"
    assert line.startswith(f"compacted: {figures} are now sent as a summary"), (announced, line)


async def test_a_repair_that_persists_never_stores_the_system_prompt(tmp_path):
    history = tmp_path / "history.jsonl"
    history.write_text('{"role":"user","content":"q"}\n'
                       '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",'
                       '"function":{"name":"read_file","arguments":"{}"}}]}\n')
    model = FakeModel(text("recovered"))
    engine, _, _ = make_engine(tmp_path, model, Config(person="You are a pirate."))
    await engine.run_prompt("again")
    stored = History(history).messages
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "user", "assistant"]
    assert model.sent_messages()[0]["content"].startswith("You are a pirate.")


async def test_alternating_tool_calls_are_caught_as_a_loop(tmp_path):
    a = tool_call("read_file", {"path": "notes.txt"})
    b = tool_call("list_folder", {"path": "."})
    model = FakeModel(a, b, a, b, a, text("done"))
    engine, events, _ = make_engine(tmp_path, model)
    await engine.run_prompt("loop")
    assert [t[2] for t in events.tools] == [False, False, False, False, True]


async def test_the_turn_end_event_comes_after_the_history_record_and_the_hooks(tmp_path):
    """The screen shows the last of the answer at on_turn_end: by then the turn is stored."""
    seen: list[str] = []
    path = tmp_path / "history.jsonl"

    class Probe:
        def after_turn(self, turn, error):
            seen.append("after_turn")

    hooks = HookSet()
    hooks.register(Probe())
    engine, events, _ = make_engine(tmp_path, FakeModel(text("stored first")), hooks=hooks)

    def on_turn_end(turn):
        on_disk = [m.get("content") for m in History(path, writable=False).messages]
        seen.append(f"turn_end stored={'stored first' in on_disk}")

    events.on_turn_end = on_turn_end
    await engine.run_prompt("hi")
    assert seen == ["after_turn", "turn_end stored=True"]


async def test_a_stalled_provider_is_retried_once_only(tmp_path):
    """A stall costs a whole timeout per try: RetryPolicy.stall_retries bounds the total wait."""
    stall = GatewayError(ErrorKind.TRANSIENT, "provider 'fake' sent no response within 60 s", stalled=True)
    model = FakeModel(stall, repeat_last=True)
    engine, events, _ = make_engine(tmp_path, model)
    with pytest.raises(GatewayError, match="no response"):
        await engine.run_prompt("hi")
    assert model.calls == 2 and len(events.notices) == 1


async def test_a_prompt_over_the_whole_budget_is_refused_before_history_keeps_it(tmp_path):
    from tmg.context.validator import PromptTooLargeError

    model = FakeModel(text("never"))
    engine, _, _ = make_engine(tmp_path, model, Config(max_history_tokens=1000))
    with pytest.raises(PromptTooLargeError, match="MAX_HISTORY_TOKENS"):
        await engine.run_prompt("word " * 5000)
    assert model.calls == 0
    assert not (tmp_path / "history.jsonl").exists()
