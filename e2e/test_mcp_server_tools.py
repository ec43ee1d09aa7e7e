"""The tools of MCP_SERVERS as the model sees them, through the real tmg and a real MCP server."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from e2e.mock_llm import Text, ToolCall

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

REPO = Path(__file__).resolve().parent.parent
ECHO_SERVER = REPO / "tests" / "support" / "echo_mcp_server.py"


def echo_server(name: str = "echo", extra: str = "") -> str:
    return f"  {name}:\n    COMMAND: {sys.executable}\n    ARGS: [{ECHO_SERVER}]\n    TIMEOUT: 30\n" + extra


def run(tmg, prompt: str = "use the tool", **env: str):
    # A loaded machine can take seconds to start a server: the first turn waits for it here,
    # so that its tool list never misses the server by chance (the short default has a unit test).
    return tmg.run(prompt, env=tmg.env(TMG_MCP_WAIT="60", **env))


def tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def test_the_model_gets_the_servers_tools_and_a_calls_result(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + echo_server())
    llm.enqueue(ToolCall("mcp_echo_echo", {"text": "hi from the server"}), Text("done"))
    r = run(tmg)
    assert r.code == 0, r.err
    assert r.out == "done\n"
    first = llm.requests[0]
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert {"mcp_echo_echo", "mcp_echo_fail", "mcp_echo_crash", "mcp_echo_nap"} <= set(tools)
    echo = tools["mcp_echo_echo"]
    assert echo["description"] == "Answer the text back, unchanged."
    assert echo["parameters"]["properties"]["text"]["type"] == "string"
    assert echo["parameters"]["required"] == ["text"]
    assert "read_file" in tools  # the built-in tools stay
    last = llm.requests[1]["messages"][-1]
    assert last["role"] == "tool" and last["content"] == "hi from the server"


def test_an_is_error_result_reaches_the_model_as_an_error(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + echo_server())
    llm.enqueue(ToolCall("mcp_echo_fail", {}), Text("it failed"))
    r = run(tmg)
    assert r.code == 0, r.err
    last = llm.requests[1]["messages"][-1]
    assert last["role"] == "tool" and last["content"].startswith("error:") and "always fails" in last["content"]
    assert "withdrawn" not in r.err
    assert "mcp_echo_echo" in tool_names(llm.requests[1])  # an isError keeps the server


def test_a_crashed_server_does_not_end_the_session(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + echo_server())
    llm.enqueue(ToolCall("mcp_echo_crash", {}), Text("carrying on"))
    r = run(tmg)
    assert r.code == 0, r.err
    assert r.out == "carrying on\n"
    last = llm.requests[1]["messages"][-1]
    assert last["role"] == "tool" and last["content"].startswith("error: MCP server echo failed")
    assert not any(name.startswith("mcp_echo_") for name in tool_names(llm.requests[1]))  # withdrawn
    warnings = [line for line in r.err.splitlines() if line.startswith("tmg: warning: MCP server echo failed")]
    assert len(warnings) == 1 and "withdrawn" in warnings[0]
    (session,) = tmg.session_dirs()
    assert "MCP server echo failed" in (session / "transcript.md").read_text()


def test_a_server_that_cannot_start_is_one_warning_and_the_chat_goes_on(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n  ghost:\n    COMMAND: no-such-mcp-server-binary\n" + echo_server())
    llm.enqueue(Text("fine"))
    r = run(tmg)
    assert r.code == 0, r.err
    assert r.out == "fine\n"
    assert len([line for line in r.err.splitlines()
                if line.startswith("tmg: warning: MCP server ghost did not start")]) == 1
    assert "mcp_echo_echo" in tool_names(llm.requests[0])


def test_the_shipped_memory_server_is_not_started_for_tools_when_memory_is_off(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + echo_server())
    llm.enqueue(Text("ok"))
    r = run(tmg)  # MEMORY.SERVER is plur (the default): tmg adds the shipped PLUR when installed
    assert r.code == 0, r.err
    assert {n for n in tool_names(llm.requests[0]) if n.startswith("mcp_")} == {
        "mcp_echo_echo", "mcp_echo_fail", "mcp_echo_crash", "mcp_echo_nap", "mcp_echo_scribble",
        "mcp_echo_refuse", "mcp_echo_weather", "mcp_echo_grow", "mcp_echo_peek"}


def test_the_memory_servers_tools_are_never_offered(tmg, llm, tmp_path):
    plur = (f"  plur:\n    COMMAND: {sys.executable}\n    ARGS: [-m, fakeplur]\n"
            f"    ENV: {{PYTHONPATH: {REPO}, HOME: {tmp_path}}}\n    TIMEOUT: 20\n")
    tmg.write_config("MCP_SERVERS:\n" + plur + echo_server() + "MEMORY:\n  ENABLED: true\n")
    llm.enqueue(Text("ok"))
    r = tmg.run("hello", env=tmg.env(memory=True, TMG_MCP_WAIT="60"))
    assert r.code == 0, r.err
    names = tool_names(llm.requests[0])
    assert "mcp_echo_echo" in names
    assert not any(name.startswith("mcp_plur") or name.startswith("plur_") for name in names)


def test_a_one_shot_whose_server_is_still_starting_says_so_once_and_answers(tmg, llm):
    # `sleep` never answers initialize: the server is "starting" for the whole (short) run.
    tmg.write_config("MCP_SERVERS:\n  slow:\n    COMMAND: sleep\n    ARGS: ['30']\n    TIMEOUT: 30\n" + echo_server())
    llm.enqueue(ToolCall("list_folder", {"path": "."}), Text("fine"))
    r = tmg.run("hello", env=tmg.env(TMG_MCP_WAIT="0.05"))
    assert r.code == 0 and r.out == "fine\n", r.err
    (line,) = [line for line in r.err.splitlines() if "slow" in line]
    assert re.fullmatch(r"tmg: warning: MCP server slow is still starting after \d+\.\d s; its tools are not "
                        r"offered with this prompt", line), line
    assert not any(name.startswith("mcp_slow_") for name in tool_names(llm.requests[0]))
