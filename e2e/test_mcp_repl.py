"""MCP servers in the interactive chat, through the real tmg in tmux: `/mcp` and `/mcp reconnect NAME`."""

from __future__ import annotations

import re

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_server_tools import echo_server, tool_names
from e2e.tmux import Terminal, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

PROMPT = r"^default · openai/mock-model >"


@pytest.fixture
def term(tmg):
    t = Terminal(width=160, height=40)
    yield t
    t.close()


def prompts(screen: str) -> int:
    return len(re.findall(PROMPT, screen, re.M))


def test_mcp_reconnect_brings_a_withdrawn_servers_tools_back(term, tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + echo_server())
    llm.enqueue(ToolCall("mcp_echo_crash", {}), Text("it crashed"), Text("after reconnect"))
    term.start_tmg(tmg, TMG_MCP_WAIT="60")
    term.ask("crash it")
    term.wait_for(lambda s: "it crashed" in s and prompts(s) == 2)
    assert not any(n.startswith("mcp_echo_") for n in tool_names(llm.requests[1]))  # withdrawn
    term.ask("/mcp")
    term.wait_for(r"echo: withdrawn")
    term.ask("/mcp reconnect echo")
    term.wait_for(r"MCP server echo reconnected: \d+ tools")
    term.ask("/mcp reconnect nosuch")
    term.wait_for(r"no MCP tool server named nosuch \(servers: echo\)")
    term.ask("and now?")
    term.wait_for("after reconnect")
    assert "mcp_echo_echo" in tool_names(llm.requests[2])


def test_an_mcp_prompt_is_a_slash_command_whose_text_is_sent(term, tmg, llm):
    from e2e.test_mcp_server_context import asking

    tmg.write_config(asking())
    llm.enqueue(Text("Ahoy, Ada!"))
    term.start_tmg(tmg, TMG_MCP_WAIT="60")
    term.ask("/mcp__asking__nope")
    term.wait_for("MCP server asking has no prompt named nope")
    term.ask("/mcp__asking__greet")
    term.wait_for(r"prompt greet of MCP server asking needs name \(/mcp__asking__greet name=\.\.\.\)")
    term.ask("/mcp__asking__greet Ada")
    term.wait_for("Ahoy, Ada!")
    (request,) = llm.requests
    assert request["messages"][-1] == {"role": "user", "content": "Say hello to Ada like a pirate."}
