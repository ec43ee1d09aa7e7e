"""The consent question's first line names what the call changes (issue 28's wording items)."""

from __future__ import annotations

from tmg.environment import Environment
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import Judgement, Question
from tmg.repl.consent import ConsentPrompt


def _head(action: ToolAction, reason: str = "changing files asks by default") -> str:
    return ConsentPrompt(Environment()).lines(Question(action, Judgement("ask", reason), "default"))[0]


def test_a_file_edit_names_the_file():
    action = ToolAction("edit_file", "write", paths=("/work/app.py",), preview="--- app.py\n+++ app.py\n")
    assert _head(action) == "tmg asks: edit_file wants to change /work/app.py (changing files asks by default)"


def test_an_mcp_tool_is_a_call_not_a_file_change():
    action = ToolAction("mcp_echo_scribble", "write", server="echo", preview='{"text": "hi"}')
    assert _head(action).startswith("tmg asks: mcp_echo_scribble wants to call (")


def test_a_command_is_shown_below_not_in_the_head():
    action = ToolAction("shell", "run", paths=("/work/x",), command="touch x", preview="touch x")
    assert _head(action, "running a command asks by default") == \
        "tmg asks: shell wants to run (running a command asks by default)"
