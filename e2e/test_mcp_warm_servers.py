"""WARM servers are first-class (issue 24 item 8): a server kept by the broker (`WARM: true`) gets
its progress, tool list changes, roots, forms and sampling through the broker both ways, and
offers its resources, as a directly started one does. The real tmg, the mock LLM, the pinned
reference server-everything and the echo test server, each kept warm by a real broker.
"""

from __future__ import annotations

import json

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_results import everything_server, tool_message, tool_names
from e2e.test_mcp_server_tools import echo_server

LONG = "mcp_everything_trigger-long-running-operation"
ROOTS, FORM = "mcp_everything_get-roots-list", "mcp_everything_trigger-elicitation-request"
SAMPLE = "mcp_everything_trigger-sampling-request"


def warm(entry: str, extra: str = "") -> str:
    return "MCP_SERVERS:\n" + entry + "    WARM: true\n" + extra


def run(tmg, prompt: str = "go"):
    return tmg.run(prompt, env=tmg.env(TMG_MCP_WAIT="60"), timeout=120)


def kept_by_the_broker(tmg, name: str) -> None:
    status = tmg.run("memory", "status", env=tmg.env())
    assert f"server {name}: up" in status.out, status.out + status.err


def test_a_warm_servers_progress_keeps_its_call_alive_past_its_timeout(tmg, llm):
    # 8 steps of 0.5 s, each well inside the 2 s TOOL_TIMEOUT; the call takes twice as long as it.
    tmg.write_config("TOOL_TIMEOUT: 2\n" + warm(everything_server(), "    CALL_TIMEOUT_MAX: 120\n"))
    llm.enqueue(ToolCall(LONG, {"duration": 4, "steps": 8}), Text("done"))
    r = run(tmg)
    assert (r.code, r.out) == (0, "done\n"), r.err
    assert tool_message(llm.requests[1])["content"] == "Long running operation completed. Duration: 4 seconds, Steps: 8."
    kept_by_the_broker(tmg, "everything")


def test_a_warm_server_asks_this_client_for_its_folders_a_form_and_the_model(tmg, llm):
    tmg.write_config(warm(everything_server(), "    SAMPLING: true\n")
                     + f"PERMISSIONS:\n  ALLOW: [{ROOTS}, {FORM}, {SAMPLE}, sampling_everything]\n")
    llm.enqueue(ToolCall(ROOTS, {}), ToolCall(FORM, {}), ToolCall(SAMPLE, {"prompt": "name a colour", "maxTokens": 20}),
                Text("teal"), Text("done"))
    r = run(tmg)
    assert (r.code, r.out) == (0, "done\n"), r.err
    roots, form, sampled = (tool_message(llm.requests[i])["content"] for i in (1, 2, 4))
    assert tmg.work.as_uri() in roots
    assert "declined" in form  # a one-shot has nobody to ask: declined in one line
    (line,) = [line for line in r.err.splitlines() if "asked for input" in line]
    assert line.startswith("tmg: warning: MCP server everything asked for input")
    assert llm.requests[3]["messages"][-1]["content"].endswith("name a colour") and '"text": "teal"' in sampled
    kept_by_the_broker(tmg, "everything")


def test_a_warm_servers_resource_is_read_an_error_answer_keeps_it_and_its_tool_list_change_is_offered(tmg, llm):
    tmg.write_config(warm(everything_server()) + echo_server(extra="    WARM: true\n"))
    llm.enqueue(Text("summarised"))
    r = run(tmg, "summarise @everything:demo://resource/dynamic/text/1")
    assert (r.code, r.out) == (0, "summarised\n"), r.err
    assert "Resource 1: This is a plaintext resource" in llm.requests[-1]["messages"][-1]["content"]
    llm.enqueue(ToolCall("mcp_echo_refuse", {}), ToolCall("mcp_echo_grow", {}), ToolCall("mcp_echo_extra", {}),
                Text("grew"))
    r = run(tmg, "grow")
    assert (r.code, r.out) == (0, "grew\n"), r.err
    refused = tool_message(llm.requests[-3])["content"]  # a JSON-RPC error answer: the server stays
    assert refused == "error: echo answered with an error: the refuse tool is always refused (JSON-RPC error -32602)"
    assert "mcp_echo_extra" not in tool_names(llm.requests[-3]) and "mcp_echo_extra" in tool_names(llm.requests[-2])
    assert tool_message(llm.requests[-1])["content"] == "extra here"
    assert "withdrawn" not in r.err
    kept_by_the_broker(tmg, "echo")
    assert "not available for WARM" not in json.dumps(r.err)
