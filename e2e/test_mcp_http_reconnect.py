"""A Streamable HTTP MCP server that goes away and comes back, through the real tmg: its tools
come back in the same session (issue 15 item 5)."""

from __future__ import annotations

from collections.abc import Callable

from e2e.mock_llm import Text, ToolCall
from tests.support.http_mcp import HttpMcpServer


def tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def before_reply(llm, actions: dict[int, Callable[[], None]]) -> None:
    """Run actions[n] when the mock is about to answer its n-th request (1-based): the moment a
    server is killed or restarted is then a point in the conversation, not a time."""
    serve = llm.next_reply

    def next_reply():
        action = actions.pop(len(llm.requests), None)
        if action is not None:
            action()
        return serve()

    llm.next_reply = next_reply


def config(url: str) -> str:
    return f"MCP_SERVERS:\n  web:\n    URL: {url}\n    TIMEOUT: 30\n"


def tool_results(request) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_a_killed_http_server_started_again_gets_its_tools_back_in_the_same_session(tmg, llm):
    server = HttpMcpServer().start()
    try:
        tmg.write_config(config(server.url))
        before_reply(llm, {2: server.kill, 3: server.start})
        llm.enqueue(ToolCall("mcp_web_echo", {"text": "one"}),
                    ToolCall("mcp_web_echo", {"text": "two"}),   # the server is gone
                    ToolCall("mcp_web_echo", {"text": "three"}),  # the server is back
                    Text("done"))
        r = tmg.run("use the tool", env=tmg.env(TMG_MCP_WAIT="60"))
    finally:
        server.kill()
    assert r.code == 0, r.err
    assert r.out == "done\n"
    first, second, third, fourth = llm.requests
    assert "mcp_web_echo" in tool_names(first)
    assert tool_results(second)[-1] == "one"
    lost = tool_results(third)[-1]
    assert lost.startswith("error: MCP server web lost its connection") and "reconnecting" in lost
    assert "mcp_web_echo" not in tool_names(third)  # not offered while it is away
    assert tool_results(fourth)[-1] == "three"
    assert "mcp_web_echo" in tool_names(fourth)  # back in the same session
    lines = r.err.splitlines()
    assert sum(line.startswith("tmg: warning: MCP server web lost its connection") for line in lines) == 1, r.err
    assert sum(line.startswith("tmg: warning: MCP server web is back") for line in lines) == 1, r.err
    assert "withdrawn" not in r.err


def test_an_http_server_restarted_between_calls_answers_the_next_call_in_a_new_session(tmg, llm):
    server = HttpMcpServer().start()

    def restart() -> None:
        server.kill()
        server.start()

    try:
        tmg.write_config(config(server.url))
        before_reply(llm, {2: restart})
        llm.enqueue(ToolCall("mcp_web_echo", {"text": "one"}), ToolCall("mcp_web_echo", {"text": "two"}),
                    Text("done"))
        r = tmg.run("use the tool", env=tmg.env(TMG_MCP_WAIT="60"))
    finally:
        server.kill()
    assert r.code == 0, r.err
    third = llm.requests[2]
    assert "mcp_web_echo" in tool_names(third)
    assert "withdrawn" not in r.err
    # The old session is unknown to the new process (404: the call is sent again in a new
    # session) or its connection dropped (reconnected at once, the model is told to call again).
    result = tool_results(third)[-1]
    assert result == "two" or (result.startswith("error: MCP server web lost its connection")
                               and "was reconnected" in result), result
