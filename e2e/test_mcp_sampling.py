"""MCP sampling (issue 15, item 11): a server's sampling/createMessage answered by the session's
model, only when the config enables it, and only as the permission engine allows. The real tmg,
the mock LLM, and the pinned reference server-everything, whose `trigger-sampling-request` tool
(offered only to a client that advertises sampling) asks the client's model and returns its answer."""

from __future__ import annotations

import json

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_results import everything_server, run, tool_message, tool_names

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

TRIGGER = "mcp_everything_trigger-sampling-request"


def sampling_server() -> str:
    return everything_server() + "    SAMPLING: true\n"


def test_a_sampling_request_allowed_by_a_rule_is_answered_by_the_sessions_model(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + sampling_server() +
                     f"PERMISSIONS:\n  ALLOW: [{TRIGGER}, sampling_everything]\n")
    llm.enqueue(ToolCall(TRIGGER, {"prompt": "name a colour", "maxTokens": 50}), Text("teal"), Text("it said teal"))
    r = run(tmg)
    assert r.code == 0 and r.out == "it said teal\n", r.err
    sampling = llm.requests[1]  # the server's request, as the model got it: its words, no tools
    assert sampling["messages"] == [
        {"role": "system", "content": "You are a helpful test server."},
        {"role": "user", "content": "Resource trigger-sampling-request context: name a colour"}]
    assert not sampling.get("tools") and sampling["max_tokens"] == 50
    answer = tool_message(llm.requests[2])["content"]
    assert answer.startswith("LLM sampling result:") and '"text": "teal"' in answer
    assert "refused" not in r.err


def test_a_sampling_request_in_a_one_shot_without_a_rule_is_refused_in_one_line(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + sampling_server() + f"PERMISSIONS:\n  ALLOW: [{TRIGGER}]\n")
    llm.enqueue(ToolCall(TRIGGER, {"prompt": "name a colour"}), Text("no colour"))
    r = run(tmg)
    assert r.code == 1 and r.out == "no colour\n", r.err  # a refused call: the run exits 1
    assert len(llm.requests) == 2  # the model was never asked on the server's behalf
    lines = [line for line in r.err.splitlines() if "sampling_everything" in line]
    assert lines == ["tmg: refused sampling_everything (an MCP server's use of your model asks by default; no "
                     "terminal to ask): to allow it, add sampling_everything to PERMISSIONS.ALLOW in your config, "
                     "answer \"always\" in an interactive tmg, or run with --permissions yolo"]
    assert "the user did not allow it" in tool_message(llm.requests[1])["content"]


def test_sampling_is_not_offered_unless_the_config_enables_it(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server())
    llm.enqueue(Text("ok"))
    r = run(tmg)
    assert r.code == 0, r.err
    assert TRIGGER not in tool_names(llm.requests[0])  # the client did not advertise sampling
    assert "mcp_everything_get-sum" in tool_names(llm.requests[0])


def test_tools_of_a_server_allowed_whole_do_not_allow_its_sampling(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + sampling_server() + "PERMISSIONS:\n  ALLOW: [mcp_everything_*]\n")
    llm.enqueue(ToolCall(TRIGGER, {"prompt": "x"}), Text("fine"))
    r = run(tmg)
    assert r.code == 1, r.err
    assert len(llm.requests) == 2 and "refused sampling_everything" in r.err
    assert json.dumps(llm.requests[1]).count("the user did not allow it") == 1
