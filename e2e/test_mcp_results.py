"""What an MCP tools/call gives back, as the model gets it: the real tmg, the mock LLM, and real MCP
servers (the pinned reference server-everything, and tests/support/echo_mcp_server.py for what
no reference server sends: a JSON-RPC error answer, a wrong outputSchema, a tool list change)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from e2e.mock_llm import Text, ToolCall
from tests.support.reference_servers import reference_server

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

REPO = Path(__file__).resolve().parent.parent
ECHO_SERVER = REPO / "tests" / "support" / "echo_mcp_server.py"


def echo_server() -> str:
    return f"  echo:\n    COMMAND: {sys.executable}\n    ARGS: [{ECHO_SERVER}]\n    TIMEOUT: 30\n"


def everything_server() -> str:
    command, *args = reference_server("everything", "stdio")
    return f"  everything:\n    COMMAND: {command}\n    ARGS: {json.dumps(args)}\n    TIMEOUT: 60\n"


def run(tmg, prompt: str = "use the tool"):
    # A loaded machine can take seconds to start a server: the first turn waits for it here.
    return tmg.run(prompt, env=tmg.env(TMG_MCP_WAIT="60"))


def tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def tool_message(request, index: int = -1) -> dict:
    tools = [m for m in request["messages"] if m["role"] == "tool"]
    return tools[index]


def image_urls(request) -> list[str]:
    return [part["image_url"]["url"] for m in request["messages"] if isinstance(m.get("content"), list)
            for part in m["content"] if part.get("type") == "image_url"]


def test_a_json_rpc_error_answer_is_an_error_result_and_the_servers_other_tools_stay_callable(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + echo_server())
    llm.enqueue(ToolCall("mcp_echo_refuse", {}), ToolCall("mcp_echo_echo", {"text": "still here"}), Text("done"))
    r = run(tmg)
    assert r.code == 0 and r.out == "done\n", r.err
    refused = tool_message(llm.requests[1])["content"]
    assert refused == "error: echo answered with an error: the refuse tool is always refused (JSON-RPC error -32602)"
    assert "mcp_echo_echo" in tool_names(llm.requests[1])
    assert tool_message(llm.requests[2])["content"] == "still here"  # the same server, called again
    assert "withdrawn" not in r.err and "warning" not in r.err


def test_structured_content_off_its_output_schema_gives_the_text_and_one_short_warning(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + echo_server())
    llm.enqueue(ToolCall("mcp_echo_weather", {}), ToolCall("mcp_echo_weather", {"again": 1}), Text("sunny"))
    r = run(tmg)
    assert r.code == 0 and r.out == "sunny\n", r.err
    assert tool_message(llm.requests[1])["content"] == "sunny, 21 C"
    assert tool_message(llm.requests[2])["content"] == "sunny, 21 C"
    assert "mcp_echo_echo" in tool_names(llm.requests[2])  # the server stays
    warnings = [line for line in r.err.splitlines() if "outputSchema" in line]
    assert warnings == ["tmg: warning: MCP server echo: weather returned structured content that does not match "
                        "its declared outputSchema ('warm' is not of type 'number'); its text is used"]
    assert "required" not in r.err and "properties" not in r.err  # no schema dump


def test_an_image_result_reaches_a_model_that_takes_images_as_an_image_part(tmg, llm):
    tmg.write_config("    IMAGES: true\n" + "MCP_SERVERS:\n" + everything_server())  # the mock provider's key
    llm.enqueue(ToolCall("mcp_everything_get-tiny-image", {}), Text("a small logo"))
    r = run(tmg)
    assert r.code == 0 and r.out == "a small logo\n", r.err
    request = llm.requests[1]  # the mock (strict, OpenAI's rules) accepted it: 200
    text = tool_message(request)["content"]
    assert text.startswith("Here's the image you requested:\n[image: image/png, ")
    (url,) = image_urls(request)
    assert url.startswith("data:image/png;base64,iVBORw0KGgo")  # a PNG, whole
    after_tool = request["messages"][request["messages"].index(tool_message(request)) + 1]
    assert after_tool["role"] == "user" and after_tool["content"][1]["image_url"]["url"] == url
    tool_line = next(line for line in r.err.splitlines() if "mcp_everything_get-tiny-image" in line)
    assert "ok: 1 image (image/png " in tool_line


def test_an_image_result_reaches_a_model_without_image_input_as_a_short_note(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server())  # openai/mock-model: not a vision model
    llm.enqueue(ToolCall("mcp_everything_get-tiny-image", {}), Text("cannot see it"))
    r = run(tmg)
    assert r.code == 0, r.err
    request = llm.requests[1]
    assert image_urls(request) == []
    text = tool_message(request)["content"]
    assert "[image: image/png, " in text and "KB]" in text and len(text) < 100
    assert "iVBOR" not in json.dumps(request)
    history = (tmg.session_dirs()[0] / "history.jsonl").read_text()
    assert history.count("iVBORw0KGgo") == 1  # stored once, bounded, with its tool message


def test_resource_links_reach_the_model_with_their_uris_and_names(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server())
    llm.enqueue(ToolCall("mcp_everything_get-resource-links", {"count": 2}), Text("two links"))
    r = run(tmg)
    assert r.code == 0, r.err
    text = tool_message(llm.requests[1])["content"]
    assert "[resource link: Blob Resource 1 <demo://resource/dynamic/blob/1>" in text
    assert "[resource link: Text Resource 2 <demo://resource/dynamic/text/2>" in text


def test_an_embedded_resource_reaches_the_model_with_its_text(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server())
    llm.enqueue(ToolCall("mcp_everything_get-resource-reference", {}), Text("read it"))
    r = run(tmg)
    assert r.code == 0, r.err
    text = tool_message(llm.requests[1])["content"]
    assert "[resource demo://resource/dynamic/text/1 (text/plain)]\nResource 1: This is a plaintext resource" in text


def test_a_task_only_tool_is_not_offered(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server())
    llm.enqueue(Text("ok"))
    r = run(tmg)
    assert r.code == 0, r.err
    names = tool_names(llm.requests[0])
    assert "mcp_everything_get-sum" in names
    assert "mcp_everything_simulate-research-query" not in names  # execution.taskSupport: required


def test_a_tool_list_change_is_offered_from_the_next_turn(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + echo_server())
    llm.enqueue(ToolCall("mcp_echo_grow", {}), ToolCall("mcp_echo_extra", {}), Text("grew"))
    r = run(tmg)
    assert r.code == 0 and r.out == "grew\n", r.err
    assert "mcp_echo_extra" not in tool_names(llm.requests[0])
    assert "mcp_echo_extra" in tool_names(llm.requests[1])
    assert tool_message(llm.requests[2])["content"] == "extra here"


def test_a_servers_tools_include_and_exclude_choose_what_is_offered(tmg, llm):
    tools = "    TOOLS:\n      include: ['get-*', echo]\n      exclude: [get-env]\n"
    tmg.write_config("MCP_SERVERS:\n" + everything_server() + tools)
    llm.enqueue(Text("ok"))
    r = run(tmg)
    assert r.code == 0, r.err
    offered = sorted(n.removeprefix("mcp_everything_") for n in tool_names(llm.requests[0]) if n.startswith("mcp_"))
    # get-roots-list: offered because tmg advertises roots
    assert offered == ["echo", "get-annotated-message", "get-resource-links", "get-resource-reference",
                       "get-roots-list", "get-structured-content", "get-sum", "get-tiny-image"]


def test_more_tools_than_a_request_may_carry_are_capped_with_one_clear_line(tmg, llm):
    many = f"  many:\n    COMMAND: {sys.executable}\n    ARGS: [{ECHO_SERVER}]\n    ENV: {{ECHO_EXTRA_TOOLS: '140'}}\n"
    tmg.write_config("MCP_SERVERS:\n" + many + "    TIMEOUT: 30\n")
    llm.enqueue(ToolCall("list_folder", {"path": "."}), Text("ok"))
    r = run(tmg)
    assert r.code == 0 and r.out == "ok\n", r.err
    for request in llm.requests:  # OpenAI rejects more than 128
        names = tool_names(request)
        assert len(names) == 128 and {"read_file", "list_folder"} <= set(names)
    built_in = len([n for n in names if not n.startswith("mcp_")])
    left_out = 9 + 140 - (128 - built_in)  # the echo server's own 9 tools and 140 more
    lines = [line for line in r.err.splitlines() if "not offered" in line]
    assert lines == [f"tmg: warning: {left_out} MCP tools are not offered (of servers many): a request carries at most 128 "
                     "tools; choose them with MCP_SERVERS.<name>.TOOLS: {include: [...], exclude: [...]}"]


def test_past_a_share_of_the_context_tool_schemas_are_found_and_loaded_on_demand(tmg, llm):
    # A tenth of 8,000 tokens is 3,200 characters: server-everything's 12 schemas take ~5,000.
    tmg.write_config("MAX_HISTORY_TOKENS: 8000\nMCP_SERVERS:\n" + everything_server())
    llm.enqueue(ToolCall("mcp_find_tools", {"query": "tiny image"}), ToolCall("mcp_everything_get-tiny-image", {}),
                Text("found it"))
    r = run(tmg)
    assert r.code == 0 and r.out == "found it\n", r.err
    first = tool_names(llm.requests[0])
    assert "mcp_find_tools" in first and not any(n.startswith("mcp_everything_") for n in first)
    found = tool_message(llm.requests[1])["content"]
    assert found.splitlines()[:2] == ["loaded, callable from now on:",
                                      "mcp_everything_get-tiny-image: Returns a tiny MCP logo image."]
    assert "mcp_everything_get-tiny-image" in tool_names(llm.requests[1])
    assert "[image: image/png, " in tool_message(llm.requests[2])["content"]
    assert len([line for line in r.err.splitlines() if "mcp_find_tools" in line and "warning" in line]) == 1
