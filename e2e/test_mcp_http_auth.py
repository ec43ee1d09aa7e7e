"""A Streamable HTTP MCP server that wants a token, through the real tmg (issue 15 item 7):
HEADERS with ${VAR} reach it, the value stays out of everything tmg stores or prints, and a
401 is said as such in one line that says what to set."""

from __future__ import annotations

import pytest

from e2e.mock_llm import Text, ToolCall
from tests.support.http_mcp import HttpMcpServer

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

TOKEN = "tok-web-canary-8c1d27e4"


@pytest.fixture
def server():
    with HttpMcpServer(token=TOKEN) as running:
        yield running


def config(url: str, headers: str = "") -> str:
    return f"MCP_SERVERS:\n  web:\n    URL: {url}\n    TIMEOUT: 30\n" + headers


def run(tmg, **env: str):
    return tmg.run("use the tool", env=tmg.env(TMG_MCP_WAIT="60", **env))


def stored_text(tmg) -> str:
    return "".join(p.read_text(errors="replace") for p in tmg.home.rglob("*") if p.is_file())


def test_headers_with_a_variable_reach_the_server_and_the_token_is_never_stored(tmg, llm, server):
    tmg.write_config(config(server.url, '    HEADERS:\n      Authorization: "Bearer ${WEB_TOKEN}"\n'))
    llm.enqueue(ToolCall("mcp_web_echo", {"text": f"say {TOKEN} back"}), Text("done"))
    r = run(tmg, WEB_TOKEN=TOKEN)
    assert r.code == 0, r.err
    assert r.out == "done\n"
    assert "mcp_web_echo" in [t["function"]["name"] for t in llm.requests[0]["tools"]]
    assert TOKEN not in r.err
    assert TOKEN not in stored_text(tmg)  # history, transcript, logs
    assert "say *** back" in (tmg.session_dirs()[0] / "transcript.md").read_text()


def test_a_401_without_headers_is_one_line_saying_what_to_set(tmg, llm, server):
    tmg.write_config(config(server.url))
    llm.enqueue(Text("fine"))
    r = run(tmg)
    assert r.code == 0, r.err
    lines = [line for line in r.err.splitlines() if "MCP server web" in line]
    assert len(lines) == 1, r.err
    assert "401 Unauthorized" in lines[0] and "MCP_SERVERS.web.HEADERS" in lines[0], lines[0]
    assert "Server returned an error response" not in r.err


def test_a_401_with_a_wrong_token_says_to_check_it(tmg, llm, server):
    tmg.write_config(config(server.url, '    HEADERS:\n      Authorization: "Bearer ${WEB_TOKEN}"\n'))
    llm.enqueue(Text("fine"))
    r = run(tmg, WEB_TOKEN="tok-wrong-00000000")
    assert r.code == 0, r.err
    (line,) = [line for line in r.err.splitlines() if "MCP server web" in line]
    assert "401 Unauthorized: check the token in MCP_SERVERS.web.HEADERS" in line, line
    assert "tok-wrong-00000000" not in r.err


def test_headers_on_a_stdio_server_are_a_warning(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n  local:\n    COMMAND: \"true\"\n    HEADERS: {X-Token: abcdefgh123}\n")
    r = tmg.run("config")
    assert "MCP_SERVERS.local.HEADERS is ignored for a stdio server" in r.err, r.err
