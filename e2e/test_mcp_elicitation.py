"""A server asking the user for input (MCP elicitation) through the real tmg (issue 15 item 11):
a one-shot declines it in one line, the REPL puts a small form to the user."""

from __future__ import annotations

import sys

import pytest

from e2e.mock_llm import Text, ToolCall
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
