"""Long MCP tool calls through the real tmg (issue 15 item 8): a progressToken is sent, progress
notifications keep a call alive past its per-server CALL_TIMEOUT (up to CALL_TIMEOUT_MAX) and are
shown on the waiting line, and a silent call is cancelled at CALL_TIMEOUT, not the global TOOL_TIMEOUT."""

from __future__ import annotations


import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_server_tools import echo_server
from e2e.tmux import Terminal, tmux_available
from tests.support.reference_servers import reference_server

LONG = "mcp_everything_trigger-long-running-operation"


def everything(extra: str = "") -> str:
    command, *args = reference_server("everything", "stdio")
    return (f"MCP_SERVERS:\n  everything:\n    COMMAND: {command}\n    ARGS: {args}\n    TIMEOUT: 60\n" + extra)


def run(tmg):
    return tmg.run("go", env=tmg.env(TMG_MCP_WAIT="60"), timeout=120)


def last_tool_result(request) -> str:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"][-1]


def test_progress_keeps_a_call_alive_past_its_timeout(tmg, llm):
    # 8 steps of 0.5 s: each progress notification comes well inside the 2 s window (TOOL_TIMEOUT,
    # no CALL_TIMEOUT of its own), the whole call takes twice as long as it.
    tmg.write_config("TOOL_TIMEOUT: 2\n" + everything("    CALL_TIMEOUT_MAX: 120\n"))
    llm.enqueue(ToolCall(LONG, {"duration": 4, "steps": 8}), Text("done"))
    r = run(tmg)
    assert r.code == 0, r.err
    assert last_tool_result(llm.requests[1]) == "Long running operation completed. Duration: 4 seconds, Steps: 8."


def test_a_call_reporting_progress_still_stops_at_call_timeout_max(tmg, llm):
    # Steps of 0.5 s, well inside the 2 s CALL_TIMEOUT: only CALL_TIMEOUT_MAX ends the call.
    tmg.write_config(everything("    CALL_TIMEOUT: 2\n    CALL_TIMEOUT_MAX: 3\n"))
    llm.enqueue(ToolCall(LONG, {"duration": 30, "steps": 60}), Text("too long"))
    r = run(tmg)
    assert r.code == 0, r.err
    result = last_tool_result(llm.requests[1])
    assert result.startswith("error: everything was still working after 3 s") and "CALL_TIMEOUT_MAX" in result
    assert LONG in [t["function"]["name"] for t in llm.requests[1]["tools"]]  # slow, not broken: it stays


def test_a_silent_call_is_cancelled_at_the_servers_call_timeout(tmg, llm):
    tmg.write_config("TOOL_TIMEOUT: 60\nMCP_SERVERS:\n" + echo_server(extra="    CALL_TIMEOUT: 1\n"))
    llm.enqueue(ToolCall("mcp_echo_nap", {"seconds": 20}), Text("gave up"))
    r = run(tmg)
    assert r.code == 0, r.err
    assert last_tool_result(llm.requests[1]).startswith("error: echo did not answer within 1 s")


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_repl_shows_a_running_tools_progress_on_its_waiting_line(tmg, llm):
    tmg.write_config(everything())
    llm.enqueue(ToolCall(LONG, {"duration": 4, "steps": 4}), Text("finished"))  # a step a second: the line redraws 8 times a step
    term = Terminal(width=200, height=30)
    try:
        term.start_tmg(tmg, TMG_MCP_WAIT="60")
        term.ask("go")
        term.wait_for(rf"running {LONG} · {LONG} [123]/4 · \d+s", timeout=60)
        term.wait_for("finished", timeout=60)
    finally:
        term.close()
