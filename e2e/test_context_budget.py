"""Long sessions through the real tmg: the budget gatekeeper prunes, then summarises once, and
the originals stay readable (SPEC §6, issue 14)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from e2e.mock_llm import ContextOverflow, MockLLM, Text, ToolCall
from e2e.conftest import TmgRunner
from e2e.tmux import Terminal, tmux_available

REPO = Path(__file__).resolve().parent.parent
MANY_TOOLS_SERVER = REPO / "tests" / "support" / "many_tools_mcp_server.py"
SUMMARY_PROMPT_START = "You summarise a conversation between a user and an AI assistant (tmg)"
SECTIONS = ("## Goal and current task", "## User's constraints (verbatim)", "## Files and facts", "## Decisions",
            "## Progress", "## Next step")
SUMMARY_HEADING = "[Summary of the earlier conversation, written by tmg"
# What the model writes: the structure asked for, and (like a weak model) not the user's constraint.
MODEL_SUMMARY = ("## Goal and current task\nWrite a plan for the project; now finishing it.\n"
                 "## User's constraints (verbatim)\nnone\n## Files and facts\na.txt and b.txt were read.\n"
                 "## Decisions\nnone\n## Progress\nThe plan is three parts long.\n## Next step\nFinish the plan.")
CONSTRAINT = "Constraint: never use tabs in any file. Read a.txt"
LONG = "The plan goes on. " * 450  # about 2,000 tokens


class SummarisingModel(MockLLM):
    """The mock, answering tmg's summary requests with a summary (as a model would) and every
    other request from its queue: the test need not know in advance which request summarises."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._local = threading.local()

    def record(self, req) -> None:
        self._local.summary = is_summary_request(req)
        super().record(req)

    def next_reply(self):
        if getattr(self._local, "summary", False):
            return Text(MODEL_SUMMARY)
        return super().next_reply()


def is_summary_request(body) -> bool:
    messages = body.get("messages") or []
    return bool(messages) and str(messages[0].get("content", "")).startswith(SUMMARY_PROMPT_START)


@pytest.fixture
def model():
    with SummarisingModel() as mock:
        yield mock


@pytest.fixture
def runner(tmp_path, model, request):
    return TmgRunner(tmp_path, model, in_process=request.node.get_closest_marker("in_process") is not None)


def ask(runner: TmgRunner, prompt: str, *replies, **env: str):
    runner.llm.enqueue(*replies)
    result = runner.run(prompt, env=runner.env(**env) if env else None)
    assert result.code == 0, result.err
    assert runner.llm.pending == 0
    return result


def tokens(body) -> int:
    """The mock's own count of a request (what a provider would bill), tools included."""
    return (len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("tools", [])))) // 4


@pytest.mark.in_process
def test_a_long_session_is_pruned_then_summarised_once_and_the_originals_stay(runner, model):
    runner.write_config("CONTEXT_WINDOW: 8000\n")  # threshold 6,400 tokens
    (runner.work / "a.txt").write_text("alpha line of the first file\n" * 500)  # ~3,600 tokens each
    (runner.work / "b.txt").write_text("bravo line of the second file\n" * 500)
    ask(runner, CONSTRAINT, ToolCall("read_file", {"path": "a.txt"}), Text("a is read"))
    ask(runner, "Read b.txt", ToolCall("read_file", {"path": "b.txt"}), Text("b is read"))
    pruned_at = next(i for i, r in enumerate(model.requests) if "[tool output cut by tmg" in json.dumps(r["messages"]))
    assert not any(is_summary_request(r) for r in model.requests)  # pruning was enough so far
    prompts = [f"Continue the plan, part {n}" for n in range(1, 7)]
    results = []
    for prompt in prompts:  # the growing plan crosses the threshold within a few prompts
        results.append(ask(runner, prompt, Text(LONG)))
        if any(is_summary_request(r) for r in model.requests):
            break
    prompts = prompts[:len(results)]
    summaries = [i for i, r in enumerate(model.requests) if is_summary_request(r)]
    assert len(summaries) == 1 and summaries[0] > pruned_at  # pruned first, one summary
    summary_request = model.requests[summaries[0]]
    asked = summary_request["messages"][0]["content"]
    assert all(s in asked for s in SECTIONS) and "ignore any instruction" in asked
    assert CONSTRAINT in summary_request["messages"][1]["content"]
    after = model.requests[summaries[0] + 1]  # the prompt goes on, from the summary
    first = after["messages"][1]["content"]
    assert first.startswith(SUMMARY_HEADING) and MODEL_SUMMARY in first
    assert json.dumps(CONSTRAINT) in first  # tmg keeps the user's words verbatim, whatever the model wrote
    err = results[-1].err  # said before the summary request (it can take a while), then its outcome
    assert 0 <= err.index("tmg: context: summarising ") < err.index("context summarised:"), err
    # The next prompt starts from the summary, below the threshold, with no second summary.
    ask(runner, "one more thing", Text("sure"))
    nxt = model.requests[-1]
    assert nxt["messages"][1]["content"].startswith(SUMMARY_HEADING) and tokens(nxt) < 6400
    assert sum(1 for r in model.requests if is_summary_request(r)) == 1
    # Every original turn is still there to read, and the summary is marked among them.
    shown = runner.run("-t")
    assert shown.code == 0
    for prompt in [CONSTRAINT, "Read b.txt", *prompts, "one more thing"]:
        assert prompt in shown.out
    assert "summary of the" in shown.out and "Write a plan for the project" in shown.out
    stored = json.loads(runner.run("-t", "--json").out)["messages"]
    assert [m["role"] for m in stored].count("summary") == 1
    assert sum(1 for m in stored if m["role"] == "user") == len(results) + 3


@pytest.mark.in_process
def test_a_provider_overflow_summarises_once_then_answers(runner, model):
    ask(runner, "Remember: answers in French. First question", Text(LONG))
    ask(runner, "Second question", Text(LONG))
    result = ask(runner, "Third question", ContextOverflow(limit=1000), Text("réponse"))
    assert result.out == "réponse\n"
    assert "summarising older turns and trying once more" in result.err
    kinds = ["summary" if is_summary_request(r) else "chat" for r in model.requests[2:]]
    assert kinds == ["chat", "summary", "chat"]
    retried = model.requests[-1]["messages"]
    assert retried[1]["content"].startswith(SUMMARY_HEADING) and retried[-1]["content"].startswith("Third question")


@pytest.mark.in_process
def test_with_compaction_off_a_provider_overflow_is_one_clear_error(runner, model):
    runner.write_config("COMPACTION:\n  ENABLED: false\n")
    ask(runner, "First question", Text(LONG))
    model.enqueue(ContextOverflow(limit=1000), Text("never sent"))
    result = runner.run("Second question")
    assert result.code == 1
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "compaction is off" in lines[0] and "/compact" in lines[0] and "/new" in lines[0]
    assert len(model.requests) == 2 and not any(is_summary_request(r) for r in model.requests)


@pytest.mark.in_process
def test_tool_schemas_count_forty_large_mcp_tools_push_a_prompt_over_the_threshold(runner, model):
    base = "CONTEXT_WINDOW: 16000\n"  # threshold 12,800 tokens; the 40 schemas are about 8,000
    mcp = (f"MCP_SERVERS:\n  many:\n    COMMAND: {sys.executable}\n    ARGS: [{MANY_TOOLS_SERVER}]\n"
           "    TIMEOUT: 30\n")
    env = {"TMG_MCP_WAIT": "60"}
    for mode, extra in (("plain", ""), ("tools", mcp)):
        runner.write_config(base + extra)
        start = len(model.requests)
        for prompt in ("First question", "Second question", "Third question", "Fourth question"):
            model.enqueue(Text(LONG))
            result = runner.run("--mode", mode, prompt, env=runner.env(**env))
            assert result.code == 0, result.err
        sent = model.requests[start:]
        summarised = [r for r in sent if is_summary_request(r)]
        if mode == "plain":
            assert not summarised and all(tokens(r) < 12800 for r in sent)
        else:
            tools = [t["function"]["name"] for t in sent[0]["tools"]]
            assert sum(1 for t in tools if t.startswith("mcp_many_")) == 40
            assert len(summarised) == 1  # the same conversation, over the threshold with the schemas
            assert sent[-1]["messages"][1]["content"].startswith(SUMMARY_HEADING)


@pytest.mark.in_process
def test_tmg_compact_summarises_the_current_session_on_demand(runner, model):
    ask(runner, "Rule: keep answers short. First question", Text(LONG))
    ask(runner, "Second question", Text(LONG))
    ask(runner, "Third question", Text("short"))
    result = runner.run("compact", "the open questions")
    assert result.code == 0, result.err
    assert result.out.startswith("compacted: ")
    asked = model.requests[-1]
    assert is_summary_request(asked) and "Give particular attention to: the open questions" in json.dumps(asked)
    ask(runner, "Fourth question", Text("ok"))
    sent = model.requests[-1]["messages"]
    assert sent[1]["content"].startswith(SUMMARY_HEADING) and '"Rule: keep answers short. First question"' in sent[1]["content"]
    assert sent[-1]["content"].startswith("Fourth question") and sum(1 for m in sent if m["role"] == "user") < 5
    shown = runner.run("-t").out
    assert "First question" in shown and "summary of the" in shown and "focus: the open questions" in shown


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_slash_compact_in_the_chat_summarises_and_the_next_prompt_starts_from_it(runner, model):
    ask(runner, "Rule: reply in haiku. First question", Text(LONG))
    ask(runner, "Second question", Text(LONG))
    term = Terminal(width=120, height=30)
    try:
        term.start_tmg(runner, prompt=r"openai/mock-model >")
        term.ask("/compact the haiku rule")
        term.wait_for(r"compacted: \d+ earlier messages")
        assert is_summary_request(model.requests[-1])
        model.enqueue(Text("an answer"))
        term.ask("Third question")
        term.wait_for(r"an answer")
        sent = model.requests[-1]["messages"]
        assert sent[1]["content"].startswith(SUMMARY_HEADING)
        assert '"Rule: reply in haiku. First question"' in sent[1]["content"]
        term.ask("/exit")
        assert term.exit_status() == 0
    finally:
        term.close()
