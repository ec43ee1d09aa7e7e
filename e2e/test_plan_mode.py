"""Plan mode end to end: a write is refused (saying it is plan mode), the model's plan is approved
in a real terminal and the mode it switches to lets the work go on; a one-shot prints the plan and
ends; the todo list survives a summary and a resume and shows in `tmg -t`."""

from __future__ import annotations

import re

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.tmux import Terminal, tmux_available

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

PLAN = "1. Write hello.txt with a greeting\n2. Tell the user"
TODOS = [{"content": "write hello.txt", "status": "in_progress"}, {"content": "tell the user", "status": "pending"}]


def test_a_one_shot_in_plan_mode_refuses_the_write_prints_the_plan_and_ends(tmg, llm):
    llm.enqueue(ToolCall("write_file", {"path": "hello.txt", "content": "hi\n"}),
                ToolCall("exit_plan_mode", {"plan": PLAN}))
    r = tmg.run("-r", "--permissions", "plan", "greet me in a file")
    assert r.code == 0, r.err
    assert not (tmg.work / "hello.txt").exists()
    refusal = llm.requests[1]["messages"][-1]["content"]
    assert refusal.startswith("refused:") and "plan mode" in refusal and "exit_plan_mode" in refusal
    assert r.out == PLAN + "\n"
    assert 'tmg --permissions accept-edits "go ahead with the plan"' in r.err
    assert len(llm.requests) == 2  # the plan ends the run: no model call after it
    plan_note = llm.requests[0]["messages"][-1]["content"]
    assert "[tmg: plan mode." in plan_note  # the model is told where it is


def test_the_todo_list_survives_a_summary_and_a_resume(tmg, llm):
    llm.enqueue(ToolCall("todo_write", {"todos": TODOS}), Text("Started."))
    r = tmg.run("-r", "--permissions", "accept-edits", "greet me in a file")
    assert r.code == 0, r.err
    assert "todo list:" in r.err and "[~] write hello.txt" in r.err and "[ ] tell the user" in r.err
    llm.enqueue(Text("The user asked for a greeting file; work had started."))  # the summary
    assert tmg.run("compact").code == 0
    llm.enqueue(Text("Going on."))
    r = tmg.run("-r", "go on")
    assert r.code == 0, r.err
    last = llm.requests[-1]["messages"]
    assert not any(c.get("function", {}).get("name") == "todo_write"
                   for m in last for c in m.get("tool_calls") or ())  # summarised away
    assert "[tmg: your todo list" in last[-1]["content"] and "[~] write hello.txt" in last[-1]["content"]
    shown = tmg.run("-t")
    assert "todo list: [~] write hello.txt · [ ] tell the user" in shown.out


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_approved_plan_switches_the_mode_and_the_work_goes_on(tmg, llm):
    hello = tmg.work / "hello.txt"
    llm.enqueue(ToolCall("write_file", {"path": "hello.txt", "content": "hi\n"}),
                ToolCall("exit_plan_mode", {"plan": PLAN}),
                ToolCall("write_file", {"path": "hello.txt", "content": "hi\n"}),
                Text("Wrote hello.txt."))
    term = Terminal(width=120, height=40)
    try:
        screen = term.start_tmg(tmg, "--permissions", "plan", prompt=r"^default · openai/mock-model")
        assert re.search(r"^default · openai/mock-model · plan >", screen, re.M), screen
        term.ask("greet me in a file")
        screen = term.wait_for(r"approve\? \[y/a/e/c/n\]")
        assert "the model proposes this plan:" in screen and "1. Write hello.txt with a greeting" in screen
        assert not hello.exists()
        term.ask("a")
        term.wait_for("Wrote hello.txt.")
        assert hello.read_text() == "hi\n"  # accept-edits: nothing asked
        assert "allow?" not in term.scrollback()
        assert "plan mode" in llm.requests[1]["messages"][-1]["content"]
        approved = llm.requests[2]["messages"][-1]["content"]
        assert approved.startswith("The user approved the plan. The permission mode is now accept-edits")
        term.ask("/exit")
        assert term.exit_status() == 0
    finally:
        term.close()
    transcript = "".join(p.read_text() for p in tmg.home.rglob("transcript.md"))
    assert "permission mode accept-edits (the approved plan)" in transcript
