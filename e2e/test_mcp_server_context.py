"""What an MCP server says besides its tools, through the real tmg (issue 15 item 12): its
instructions reach the system message (capped), its log messages show under --debug only, and
its stderr log is rotated."""

from __future__ import annotations

import sys

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_server_tools import REPO

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

ASKING_SERVER = REPO / "tests" / "support" / "asking_mcp_server.py"


def asking(env: str = "") -> str:
    return (f"MCP_SERVERS:\n  asking:\n    COMMAND: {sys.executable}\n    ARGS: [{ASKING_SERVER}]\n"
            "    TIMEOUT: 30\n" + env)


def run(tmg, *flags: str):
    return tmg.run(*flags, "hello", env=tmg.env(TMG_MCP_WAIT="60"))


def system_message(request) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return first["content"]


def test_a_servers_instructions_reach_the_system_message(tmg, llm):
    tmg.write_config(asking())
    llm.enqueue(Text("aye"))
    r = run(tmg)
    assert r.code == 0, r.err
    system = system_message(llm.requests[0])
    assert "Instructions from MCP server asking" in system
    assert "Always call the user captain." in system


def test_long_instructions_are_capped(tmg, llm):
    tmg.write_config(asking("    ENV: {INSTRUCTIONS: " + "word " * 3000 + "THE-END}\n"))
    llm.enqueue(Text("ok"))
    r = run(tmg)
    assert r.code == 0, r.err
    system = system_message(llm.requests[0])
    assert "word word" in system and "THE-END" not in system
    assert "more characters cut]" in system
    assert len(system) < 4000


def test_a_servers_log_messages_show_under_debug_only(tmg, llm):
    tmg.write_config(asking())
    llm.enqueue(ToolCall("mcp_asking_chatty", {}), Text("done"))
    quiet = run(tmg)
    assert quiet.code == 0, quiet.err
    assert "chatty was called" not in quiet.err
    llm.enqueue(ToolCall("mcp_asking_chatty", {}), Text("done"))
    loud = run(tmg, "--debug")
    assert loud.code == 0, loud.err
    lines = [line for line in loud.err.splitlines() if "chatty was called" in line]
    assert len(lines) == 1 and "MCP server asking" in lines[0] and "[info]" in lines[0], loud.err


def test_a_servers_stderr_log_is_rotated_when_it_grows_large(tmg, llm):
    tmg.write_config(asking())
    log = tmg.home / "mcp-asking.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_bytes(b"old line\n" * 200_000)  # 1.8 MB from earlier runs
    llm.enqueue(ToolCall("mcp_asking_chatty", {}), Text("done"))
    r = run(tmg)
    assert r.code == 0, r.err
    old = tmg.home / "mcp-asking.log.1"
    assert old.read_bytes().startswith(b"old line\n") and old.stat().st_size == 1_800_000
    fresh = log.read_text()
    assert "chatty wrote to stderr" in fresh and "old line" not in fresh
