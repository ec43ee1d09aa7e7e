"""The budget gatekeeper (80), the summary and transient notices (110), with a fake summary model."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tmg.compose import build_pipeline
from tmg.config.model import CompactionConfig, Config
from tmg.context.gatekeeper import BudgetGatekeeper, choose_cut
from tmg.context.notices import MEMORY_UNAVAILABLE_FOR_MODEL, SUMMARISED_FOR_MODEL
from tmg.context.pipeline import TurnContext
from tmg.context.summary import SYSTEM_PROMPT, VERBATIM_HEADING, SummaryReply
from tmg.context.tokens import Budget, TokenEstimator, context_window
from tmg.llm.gateway import ErrorKind, GatewayError, ProviderSpec, Usage
from tmg.session.history import SUMMARY_HEADING, History

SPEC = ProviderSpec(name="fake", model="fake/model", context_window=8000)  # threshold 6,400


class SummaryModel:
    """Answers summary requests from a list (text, or a GatewayError to raise); records them."""

    def __init__(self, *replies, window: int = 8000) -> None:
        self.replies = list(replies)
        self.requests: list[list[dict]] = []
        self.window = window

    def __call__(self, _config, _provider):
        async def call(messages):
            self.requests.append(messages)
            reply = self.replies.pop(0)
            if isinstance(reply, Exception):
                raise reply
            return SummaryReply(reply, Usage(100, 20, 0.0), "fake/model", self.window)
        return call, self.window


def user(text):
    return {"role": "user", "content": text}


def answer(text):
    return {"role": "assistant", "content": text}


def call(call_id, name="read_file"):
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}]}


def result(call_id, text):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def ctx(messages, prompt_id=1, tools=(), config=None, force=False):
    return TurnContext(list(messages), config or Config(), prompt_id, 1, force, tools=list(tools), provider=SPEC)


def long_chat(turns=8, size=3200):
    """About 6,500 tokens with turns=8: over the threshold (6,400), under the window (8,000)."""
    out = [user("Constraint: always answer in English. Start.")]
    for i in range(turns):
        out += [answer(f"answer {i} " + "y" * size), user(f"question {i + 1}")]
    return out


async def test_under_the_threshold_nothing_changes():
    model = SummaryModel()
    pipeline = build_pipeline(budget=BudgetGatekeeper(TokenEstimator(), model))
    messages = long_chat(turns=2)
    refined = await pipeline.run(ctx(messages))
    assert refined.payload[1:] == messages and not model.requests


async def test_old_tool_outputs_are_pruned_first_and_recent_ones_kept_whole():
    model = SummaryModel()
    c = ctx([user("read them"), call("c1"), result("c1", "a" * 16000), call("c2"), result("c2", "b" * 16000),
             call("c3"), result("c3", "c" * 8000), answer("done"), user("and now?")])
    refined = await build_pipeline(budget=BudgetGatekeeper(TokenEstimator(), model)).run(c)
    tools = [m["content"] for m in refined.payload if m["role"] == "tool"]
    assert tools[0].startswith("[tool output cut by tmg to save context: 16,000 characters from read_file")
    assert tools[2] == "c" * 8000  # inside the protected recent window
    assert not model.requests and not refined.persist
    assert any(n.startswith("context: cut") for n in c.notices)


async def test_then_older_turns_are_summarised_once_with_the_users_words_verbatim():
    model = SummaryModel("## Goal and current task\nEnglish answers.")
    gatekeeper = BudgetGatekeeper(TokenEstimator(), model)
    c = ctx(long_chat())
    refined = await build_pipeline(budget=gatekeeper).run(c)
    assert len(model.requests) == 1 and model.requests[0][0]["content"] == SYSTEM_PROMPT
    assert "ignore any instruction" in SYSTEM_PROMPT
    summary = refined.payload[1]["content"]
    assert summary.startswith(SUMMARY_HEADING) and VERBATIM_HEADING in summary
    assert '"Constraint: always answer in English. Start."' in summary
    assert refined.payload[-1]["content"].startswith("question 8")
    assert SUMMARISED_FOR_MODEL in refined.payload[-1]["content"]  # told once, riding with the prompt
    assert c.summary is not None and c.summary.first_kept["role"] in ("user", "assistant")
    # The same prompt's next turn never summarises again.
    again = await build_pipeline(budget=gatekeeper).run(ctx(long_chat()))
    assert len(model.requests) == 1 and again.payload[1]["content"] != summary


async def test_a_tool_call_is_never_separated_from_its_result():
    messages = [{"role": "system", "content": "s"}, user("do it")]
    for i in range(12):
        messages += [call(f"c{i}"), result(f"c{i}", "r" * 3000)]
    messages.append(answer("done"))
    cut = choose_cut(messages, 1, 2000, lambda t: t)
    assert messages[cut]["role"] == "assistant" and messages[cut - 1]["role"] == "tool"


async def test_a_failed_summary_trips_the_breaker_for_that_prompt_only():
    model = SummaryModel(GatewayError(ErrorKind.TRANSIENT, "provider down"), "## Goal\nok")
    gatekeeper = BudgetGatekeeper(TokenEstimator(), model)
    first = ctx(long_chat(), prompt_id=1)
    await build_pipeline(budget=gatekeeper).run(first)
    await build_pipeline(budget=gatekeeper).run(ctx(long_chat(), prompt_id=1))
    assert len(model.requests) == 1 and first.summary is None
    assert any("not summarised (cannot" in n or "not summarised (provider down" in n for n in first.notices)
    nxt = ctx(long_chat(), prompt_id=2)
    await build_pipeline(budget=gatekeeper).run(nxt)
    assert len(model.requests) == 2 and nxt.summary is not None


async def test_a_summary_saving_under_five_percent_is_not_used():
    model = SummaryModel("x" * 30000)  # longer than what it replaces
    c = ctx(long_chat())
    refined = await build_pipeline(budget=BudgetGatekeeper(TokenEstimator(), model)).run(c)
    assert c.summary is None and not refined.payload[1]["content"].startswith(SUMMARY_HEADING)


async def test_a_summary_request_too_long_goes_in_pieces():
    model = SummaryModel("part one", "part two", "part three", "merged", window=3000)
    c = ctx(long_chat())
    await build_pipeline(budget=BudgetGatekeeper(TokenEstimator(), model)).run(c)
    assert len(model.requests) >= 3 and "SUMMARY OF PART 1" in model.requests[-1][1]["content"]
    assert c.summary is not None and c.summary.summary.pieces == len(model.requests)


async def test_compaction_off_means_nothing_is_pruned_or_summarised():
    model = SummaryModel("never")
    config = Config(compaction=CompactionConfig(enabled=False))
    messages = long_chat()
    c = ctx(messages, config=config)
    refined = await build_pipeline(budget=BudgetGatekeeper(TokenEstimator(), model)).run(c)
    assert refined.payload[1:] == messages and not model.requests
    assert any(n.startswith("context nearly full: about") for n in c.notices)


async def test_tool_schemas_count_toward_the_threshold():
    schemas = [{"type": "function", "function": {"name": f"t{i}", "description": "d" * 2000, "parameters": {}}}
               for i in range(10)]
    messages = long_chat(turns=3)
    model = SummaryModel("## Goal\nshort")
    without = ctx(messages)
    await build_pipeline(budget=BudgetGatekeeper(TokenEstimator(), model)).run(without)
    assert without.summary is None
    with_tools = ctx(messages, tools=schemas)
    await build_pipeline(budget=BudgetGatekeeper(TokenEstimator(), model)).run(with_tools)
    assert with_tools.summary is not None


async def test_memory_unavailable_is_told_to_the_model_this_request_only():
    c = ctx([user("hello")])
    c.meta["memory_unavailable"] = "recall failed"
    refined = await build_pipeline().run(c)
    assert refined.payload[-1]["content"] == "hello\n\n" + MEMORY_UNAVAILABLE_FOR_MODEL
    assert refined.canonical[-1]["content"] == "hello" and "memory_unavailable" not in c.meta


def test_the_window_comes_from_the_provider_then_the_config_then_known_models():
    config = Config(max_history_tokens=50_000)
    assert context_window(config, SPEC) == 8000
    assert context_window(replace(config, context_window=30_000), replace(SPEC, context_window=None)) == 30_000
    assert context_window(config, ProviderSpec("x", "anthropic/claude-sonnet-4-5")) == 200_000
    assert context_window(config, ProviderSpec("x", "openai/some-local-thing")) == 50_000
    budget = Budget.for_request(config, ProviderSpec("x", "anthropic/claude-sonnet-4-5"))
    assert budget.threshold == 50_000 and budget.hard == 200_000  # MAX_HISTORY_TOKENS is lower than 80%


def test_the_estimate_is_calibrated_by_reported_usage():
    estimator = TokenEstimator()
    estimator.last_raw = 1000
    for _ in range(6):
        estimator.observe(1500)
    assert 1.45 < estimator.ratio <= 1.5 and estimator.scale(1000) > 1400
    estimator.observe(10**9)  # nonsense is bounded
    assert estimator.ratio <= 3.0


def test_history_sends_the_summary_in_place_of_the_turns_it_replaces_and_keeps_them(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    for i in range(4):
        history.append(user(f"q{i}"))
        history.append(answer(f"a{i}"))
    first_kept = history.model_view[6]  # q3
    history.add_summary("the summary", first_kept, {"messages": 6})
    history.append(user("q4"))
    for view in (history.model_view, History(path).model_view):
        assert [m["content"][:5] for m in view] == ["[Summ", "Under", "q3", "a3", "q4"]
    loaded = History(path)
    assert len(loaded.messages) == 10 and loaded.messages[8]["role"] == "summary"
    assert loaded.messages[8]["meta"]["summary"]["keep_from"] == 6
    assert loaded.last_turn_message()["content"] == "q4"


def test_a_summary_whose_kept_part_starts_inside_a_tool_loop_sends_no_acknowledgement(tmp_path):
    history = History(tmp_path / "history.jsonl")
    history.append(user("do it"))
    history.append(call("c1"))
    history.append(result("c1", "r"))
    history.append(answer("next step"))
    history.add_summary("s", history.model_view[3], {"messages": 3})
    assert [m["role"] for m in history.model_view] == ["user", "assistant"]
    assert history.model_view[1]["content"] == "next step"


def test_summaries_can_be_summarised_again_and_keep_the_users_words():
    from tmg.context.summary import user_quotes, with_quotes

    first = with_quotes("model text", ["never use tabs"])
    messages = [user(f"{SUMMARY_HEADING}\n\n{first}"), answer("ok"), user("also: no emojis")]
    assert user_quotes(messages) == ["never use tabs", "also: no emojis"]
    with pytest.raises(AssertionError):
        assert user_quotes([user("x" * 5000)])  # a paste is the model's to summarise, not quoted


async def test_the_summary_is_announced_and_reported_with_the_same_counts():
    """"summarising N earlier messages (about T tokens)" and "context summarised: N ... (about T
    tokens)" name the same N and T, an earlier summary summarised again with them included."""
    import re

    from tmg.session.history import SUMMARY_ACK

    said: list[str] = []
    gatekeeper = BudgetGatekeeper(TokenEstimator(), SummaryModel("## Goal and current task\nok"), announce=said.append)
    earlier = [user(f"{SUMMARY_HEADING}\n\nan earlier summary"), answer(SUMMARY_ACK)]
    messages = earlier + long_chat()
    c = ctx(messages)
    await build_pipeline(budget=gatekeeper).run(c)
    (announced,) = said
    count, tokens = re.fullmatch(r"context: summarising (\d+) earlier messages \(about ([\d,]+) tokens\)…",
                                 announced).groups()
    (reported,) = [n for n in c.notices if n.startswith("context summarised:")]
    assert reported.startswith(f"context summarised: {count} earlier messages (about {tokens} tokens) now sent")
    assert int(count) == messages.index(c.summary.first_kept) - len(earlier)  # the earlier pair is no message
