"""A server asking the user for input (MCP elicitation) through the real tmg (issue 15 item 11,
issue 24 items 3 and 6): a one-shot declines it in one line, the REPL puts a small form to the
user whose defaults Enter takes, and shows a page the server wants opened without opening it."""

from __future__ import annotations

import json
import re
import sys

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_results import everything_server
from e2e.test_mcp_server_tools import REPO
from e2e.tmux import Terminal, tmux_available


ASKING_SERVER = REPO / "tests" / "support" / "asking_mcp_server.py"
CONFIG = f"MCP_SERVERS:\n  echo:\n    COMMAND: {sys.executable}\n    ARGS: [{ASKING_SERVER}]\n    TIMEOUT: 30\n"


def last_tool_result(request) -> str:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"][-1]


def test_a_one_shot_declines_a_servers_question_in_one_line(tmg, llm):
    tmg.write_config(CONFIG)
    llm.enqueue(ToolCall("mcp_echo_book", {}), Text("not booked"))
    r = tmg.run("book a table", env=tmg.env(TMG_MCP_WAIT="60"))
    assert r.code == 0, r.err
    assert last_tool_result(llm.requests[1]) == "not booked (decline)"
    lines = [line for line in r.err.splitlines() if "asked for input" in line]
    assert len(lines) == 1, r.err
    assert lines[0].startswith('tmg: warning: MCP server echo asked for input ("Who is the table for?")')


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_repl_puts_a_servers_question_to_the_user_as_a_form(tmg, llm):
    tmg.write_config(CONFIG)
    llm.enqueue(ToolCall("mcp_echo_book", {}), Text("table booked"),
                ToolCall("mcp_echo_book", {}), Text("never mind"))
    term = Terminal(width=160, height=40)
    try:
        term.start_tmg(tmg, TMG_MCP_WAIT="60")
        term.ask("book a table")
        term.wait_for("tmg asks for MCP server echo: Who is the table for?")
        term.wait_for(r"answer\? \[y/n\]")
        term.ask("y")
        term.wait_for(r"Name \(text, required\) - who the table is for:")
        term.ask("Ada")
        term.wait_for(r"Guests \(a whole number, required\):")
        term.ask("four")
        term.wait_for("that is not a whole number")
        term.ask("4")
        term.wait_for("table booked")
        assert last_tool_result(llm.requests[1]) == "booked for Ada, 4 guests"
        term.ask("again")
        term.wait_for(lambda s: s.count("answer? [y/n]") == 2)
        term.ask("n")
        term.wait_for("never mind")
        assert last_tool_result(llm.requests[3]) == "not booked (decline)"
    finally:
        term.close()


FORM_FIELDS = ("String", "Boolean", "String with default", "String with email format", "String with uri format",
               "String with date format", "Integer", "Number in range 1-1000", "Untitled Single Select Enum",
               "Untitled Multiple Select Enum", "Titled Single Select Enum", "Titled Multiple Select Enum",
               "Legacy Titled Single Select Enum")


def raw_result(text: str) -> dict:
    return json.loads(text.split("Raw result:", 1)[1])


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_enter_takes_the_forms_defaults_and_a_page_to_open_is_shown_not_opened(tmg, llm):
    # The pinned reference server-everything: its form has a field of every kind, most with a default.
    tmg.write_config("MCP_SERVERS:\n" + everything_server()
                     + "PERMISSIONS:\n  ALLOW: [mcp_everything_trigger-elicitation-request, "
                       "mcp_everything_trigger-url-elicitation]\n")
    llm.enqueue(ToolCall("mcp_everything_trigger-elicitation-request", {}), Text("thanks for the form"),
                ToolCall("mcp_everything_trigger-url-elicitation", {"url": "https://pay.example.com/checkout?o=7"}),
                Text("go pay"))
    term = Terminal(width=200, height=50)
    try:
        term.start_tmg(tmg, TMG_MCP_WAIT="60")
        term.ask("fill in the form")
        term.wait_for(r"answer\? \[y/n\]")
        term.ask("y")
        for i, label in enumerate(FORM_FIELDS):
            term.wait_for(rf"^\s+{re.escape(label)} \(", timeout=20)
            term.ask("Ada" if i == 0 else "")  # the one required field, then Enter for each of the others
        term.wait_for("thanks for the form")
        got = raw_result(last_tool_result(llm.requests[1]))
        term.ask("now pay")
        screen = term.wait_for(r"open it\? \[y/n\]")
        assert "open a page on pay.example.com: https://pay.example.com/checkout?o=7" in screen
        term.ask("y")
        term.wait_for("go pay")
    finally:
        term.close()
    assert got["action"] == "accept"
    assert got["content"] == {
        "name": "Ada", "firstLine": "It was a dark and stormy night.", "integer": 42, "number": 3.14,
        "untitledSingleSelectEnum": "Monica", "untitledMultipleSelectEnum": ["Guitar"],
        "titledSingleSelectEnum": "hero-1", "titledMultipleSelectEnum": ["fish-1"], "legacyTitledEnum": "pet-1"}
    assert "accept" in last_tool_result(llm.requests[3])


def test_a_one_shot_declines_a_page_to_open_in_one_line_naming_its_host(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server()
                     + "PERMISSIONS:\n  ALLOW: [mcp_everything_trigger-url-elicitation]\n")
    llm.enqueue(ToolCall("mcp_everything_trigger-url-elicitation", {"url": "https://pay.example.com/x"}), Text("no"))
    r = tmg.run("pay", env=tmg.env(TMG_MCP_WAIT="60"))
    assert (r.code, r.out) == (0, "no\n"), r.err
    (line,) = [line for line in r.err.splitlines() if "asked you to open a page" in line]
    assert "pay.example.com" in line and "run tmg without a prompt" in line, line
    assert "decline" in last_tool_result(llm.requests[1])


@pytest.mark.parametrize("kept", ["", "    WARM: true\n"], ids=["direct", "warm"])
def test_a_call_that_needs_a_page_opened_first_says_so_to_the_model_and_the_user(tmg, llm, kept):
    # server-everything's error path: the call is answered -32042 (URL elicitation required), its
    # pages in the error's data (which the broker passes on as is for a WARM server).
    tmg.write_config("MCP_SERVERS:\n" + everything_server() + kept
                     + "PERMISSIONS:\n  ALLOW: [mcp_everything_trigger-url-elicitation]\n")
    llm.enqueue(ToolCall("mcp_everything_trigger-url-elicitation", {"url": "https://pay.example.com/x",
                                                                    "errorPath": True}), Text("later"))
    r = tmg.run("pay", env=tmg.env(TMG_MCP_WAIT="60"), timeout=120)
    assert (r.code, r.out) == (0, "later\n"), r.err
    (line,) = [line for line in r.err.splitlines() if "asked you to open a page" in line]
    assert "modelcontextprotocol.io" in line, line
    assert last_tool_result(llm.requests[1]) == ("error: everything needs the user to open a page first "
                                                 "(modelcontextprotocol.io); they did not")
