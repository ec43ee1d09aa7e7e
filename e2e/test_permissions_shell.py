"""The real `shell` tool under the permission engine, through the real one-shot (no terminal:
what would ask is refused, with one line on stderr naming what would allow it)."""

from __future__ import annotations

import pytest

from e2e.mock_llm import Text, ToolCall

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def tool_message(llm) -> str:
    last = llm.requests[1]["messages"][-1]
    assert last["role"] == "tool", last
    return last["content"]


def allow(tmg, *rules: str) -> None:
    tmg.write_config("PERMISSIONS:\n  ALLOW: [" + ", ".join(rules) + "]\n")


def test_touch_is_refused_the_model_is_told_and_stderr_names_how_to_allow_it(tmg, llm):
    llm.enqueue(ToolCall("shell", {"command": "touch x"}), Text("I was not allowed to"))
    r = tmg.run("make x")
    assert r.code == 1, r.err  # the model's answer is printed, but what was asked was not done
    assert not (tmg.work / "x").exists()
    refusal = tool_message(llm)
    assert refusal.startswith("refused:") and "touch x" in refusal
    (line,) = [line for line in r.err.splitlines() if "PERMISSIONS.ALLOW" in line]
    assert line.startswith("tmg: refused shell `touch x`") and "shell(touch x)" in line and "--permissions yolo" in line
    assert "no terminal to ask" in line  # stdin is not a terminal here: true


def test_touch_runs_with_a_rule(tmg, llm):
    allow(tmg, "shell(touch)")
    llm.enqueue(ToolCall("shell", {"command": "touch x"}), Text("made it"))
    r = tmg.run("make x")
    assert r.code == 0, r.err
    assert (tmg.work / "x").exists()


def test_touch_runs_in_yolo(tmg, llm):
    llm.enqueue(ToolCall("shell", {"command": "touch x"}), Text("made it"))
    r = tmg.run("--permissions", "yolo", "make x")
    assert r.code == 0, r.err
    assert (tmg.work / "x").exists()


def test_an_allowed_prefix_does_not_carry_a_second_command_or_a_substitution(tmg, llm):
    allow(tmg, "shell(git status)", "shell(echo)")
    (tmg.work / "y").mkdir()
    for command in ("git status && rm -rf y", "echo $(rm -rf y)"):
        llm.enqueue(ToolCall("shell", {"command": command}), Text("refused"))
        r = tmg.run("clean up")
        assert r.code == 1, r.err
        assert llm.requests[-1]["messages"][-1]["content"].startswith("refused:")
        assert (tmg.work / "y").is_dir()


def test_a_pipeline_of_allowed_commands_runs(tmg, llm):
    allow(tmg, "shell(ls)", "shell(wc)")
    for name in ("a", "b", "c"):
        (tmg.work / name).touch()
    llm.enqueue(ToolCall("shell", {"command": "ls | wc -l"}), Text("three"))
    r = tmg.run("count")
    assert r.code == 0, r.err
    result = tool_message(llm)
    assert not result.startswith("refused") and "3" in result
