"""A Streamable HTTP MCP server that requires OAuth, through the real tmg (issue 15 item 7).

The server (tests/support/oauth_mcp_server.py) is the SDK's server auth support with an
in-memory authorization server that approves at once; the test plays the browser: it GETs the
authorization URL tmg prints and follows the redirect to tmg's loopback listener. What the
server issued and which bearer tokens reached it are in its log.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from e2e.conftest import tmg_command
from e2e.mock_llm import Text, ToolCall
from e2e.tmux import Terminal, tmux_available
from tests.support.oauth_mcp import AUTHORIZATION_URL, OAuthMcpServer, approve

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


@pytest.fixture
def server(tmp_path):
    with OAuthMcpServer(tmp_path / "oauth-server.log") as running:
        yield running


def config(url: str) -> str:
    return f"MCP_SERVERS:\n  web:\n    URL: {url}\n    TIMEOUT: 30\n"


def store_path(tmg):
    return tmg.root / "xdg" / "tmg" / "mcp-oauth.json"


def stored_text(tmg) -> str:
    """Everything tmg keeps in TMG_HOME: history, transcripts, logs."""
    return "".join(p.read_text(errors="replace") for p in tmg.home.rglob("*") if p.is_file())


def login(tmg, name: str = "web", env: dict[str, str] | None = None) -> tuple[str, str]:
    """`tmg mcp login NAME`, the browser played: (stdout, stderr) once it exited 0."""
    proc = subprocess.Popen(tmg_command() + ["mcp", "login", name], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmg.work, env=env or tmg.env())
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the line saying where to log in
        found = AUTHORIZATION_URL.search(first)
        assert found, first + proc.stderr.read() if proc.stderr else first
        assert "logged in to web" in approve(found.group(1))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    return first + out, err


def test_a_login_is_kept_private_and_a_later_one_shot_uses_it(tmg, llm, server):
    tmg.write_config(config(server.url))
    out, err = login(tmg)
    assert "logged in to MCP server web: 1 tool" in out
    (token,) = server.lines("code")
    assert stat.S_IMODE(os.stat(store_path(tmg)).st_mode) == 0o600
    assert token in store_path(tmg).read_text()
    assert token not in out + err

    llm.enqueue(ToolCall("mcp_web_echo", {"text": "through oauth"}), Text("done"))
    r = tmg.run("use the tool", env=tmg.env(TMG_MCP_WAIT="60"))
    assert r.code == 0, r.err
    assert r.out == "done\n"
    assert "mcp_web_echo" in [t["function"]["name"] for t in llm.requests[0]["tools"]]
    assert "through oauth" in json.dumps(llm.requests[1]["messages"][-1])  # the tool's answer
    assert server.lines("code") == [token]  # no second login: the stored one was used
    assert token in server.lines("bearer")
    assert token not in r.err and token not in stored_text(tmg)


def only_line_about_web(err: str) -> str:
    """The one stderr line about the server (there must be exactly one)."""
    lines = [line for line in err.splitlines() if "MCP server web" in line]
    assert len(lines) == 1, err
    return lines[0]


def test_a_one_shot_without_a_login_says_so_in_one_line_and_answers(tmg, llm, server):
    tmg.write_config(config(server.url))
    llm.enqueue(Text("fine"))
    r = tmg.run("hello", env=tmg.env(TMG_MCP_WAIT="60"))
    assert r.code == 0, r.err
    assert r.out == "fine\n"
    line = only_line_about_web(r.err)
    assert "needs an OAuth login" in line and "tmg mcp login web" in line, line
    assert "/authorize" not in r.err  # nobody is here to open it: no URL, no waiting
    assert not server.lines("code")


def test_an_expired_token_is_refreshed_and_the_new_one_kept(tmg, llm, server):
    tmg.write_config(config(server.url))
    login(tmg)
    (first,) = server.lines("code")
    data = json.loads(store_path(tmg).read_text())
    data["servers"][server.url]["expires_at"] = 1.0  # as if an hour went by
    store_path(tmg).write_text(json.dumps(data))
    seen = len(server.lines("bearer"))  # the login's own requests

    llm.enqueue(ToolCall("mcp_web_echo", {"text": "refreshed"}), Text("done"))
    r = tmg.run("use the tool", env=tmg.env(TMG_MCP_WAIT="60"))
    assert r.code == 0, r.err
    assert r.out == "done\n"
    (fresh,) = server.lines("refresh")
    assert server.lines("code") == [first]  # refreshed, not logged in again
    assert set(server.lines("bearer")[seen:]) == {fresh}  # the expired token was never sent
    stored = store_path(tmg).read_text()
    assert fresh in stored and first not in stored
    assert stat.S_IMODE(os.stat(store_path(tmg)).st_mode) == 0o600
    assert fresh not in r.err and fresh not in stored_text(tmg)


def test_a_refused_stored_login_is_one_line_and_the_answer_comes(tmg, llm, server):
    tmg.write_config(config(server.url))
    login(tmg)
    server.kill()
    server.start()  # a new authorization server: the stored tokens mean nothing to it
    llm.enqueue(Text("fine"))
    r = tmg.run("hello", env=tmg.env(TMG_MCP_WAIT="60"))
    assert r.code == 0, r.err
    assert r.out == "fine\n"
    line = only_line_about_web(r.err)
    assert "stored OAuth login was refused" in line and "tmg mcp login web" in line, line
    assert "Traceback" not in r.err and "OAuth flow error" not in r.err  # the SDK's own log stays out


def test_a_login_is_sent_only_to_the_url_it_was_made_for(tmg, llm, server, tmp_path):
    tmg.write_config(config(server.url))
    login(tmg)
    (token,) = server.lines("code")
    with OAuthMcpServer(tmp_path / "other.log") as other:
        tmg.write_config(config(other.url))  # the same name, another URL
        llm.enqueue(Text("fine"))
        r = tmg.run("hello", env=tmg.env(TMG_MCP_WAIT="60"))
        assert r.code == 0, r.err
        assert "needs an OAuth login" in r.err
        assert token not in other.lines("bearer")



@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_repl_shows_where_to_log_in_and_the_tools_come_once_logged_in(tmg, llm, server):
    tmg.write_config(config(server.url))
    llm.enqueue(ToolCall("mcp_web_echo", {"text": "after login"}), Text("done"))
    term = Terminal(width=600, height=40)  # the URL on one line
    try:
        screen = term.start_tmg(tmg, prompt=AUTHORIZATION_URL.pattern, timeout=60, TMG_MCP_WAIT="60")
        assert "MCP server web needs you to log in" in screen
        assert "logged in to web" in approve(AUTHORIZATION_URL.search(screen).group(1))
        term.wait_for(r"^default · openai/mock-model >")
        term.ask("use the tool")
        term.wait_for("done")
        shown = term.scrollback()
    finally:
        term.close()
    assert "mcp_web_echo" in [t["function"]["name"] for t in llm.requests[0]["tools"]]
    assert "after login" in json.dumps(llm.requests[1]["messages"][-1])
    (token,) = server.lines("code")
    assert stat.S_IMODE(os.stat(store_path(tmg)).st_mode) == 0o600
    assert token not in stored_text(tmg) and token not in shown


def test_doctor_and_tmg_mcp_use_the_stored_login(tmg, llm, server):
    tmg.write_config(config(server.url))
    r = tmg.run("mcp")
    assert "web: failed" in r.out and "tmg mcp login web" in r.out, r.out + r.err
    login(tmg)
    r = tmg.run("mcp")
    assert "web: ready, 1 tool" in r.out, r.out + r.err
    r = tmg.run("doctor")
    assert "mcp server web" in r.out and "1 tools" in r.out, r.out + r.err
    (token,) = server.lines("code")
    assert token not in r.out + r.err


def test_an_untrusted_project_cannot_point_a_server_at_a_stored_login(tmg, llm, server):
    from e2e.test_folder_trust import run_in, trust_lines, user_config

    tmg.write_config(config(server.url))
    login(tmg)
    seen = len(server.lines("bearer"))
    tmg.write_config()  # the user's own config: the provider only
    user_config(tmg)
    (tmg.work / "tmg.yaml").write_text(tmg.config.read_text() + f"MCP_SERVERS:\n  theirs:\n    URL: {server.url}\n")
    llm.enqueue(ToolCall("mcp_theirs_echo", {"text": "x"}), Text("fine"))
    r = run_in(tmg, tmg.work, "hello")
    assert r.code == 0, r.err
    (line,) = trust_lines(r.err)
    assert "MCP_SERVERS.theirs" in line, line
    assert len(server.lines("bearer")) == seen  # nothing reached the server, the login least of all
    assert "mcp_theirs_echo" not in json.dumps(llm.requests[0].get("tools", []))


def test_a_server_given_an_authorization_header_is_never_sent_through_oauth(tmg, llm, server):
    tmg.write_config(config(server.url) + '    HEADERS:\n      Authorization: "Bearer ${WEB_TOKEN}"\n')
    llm.enqueue(Text("fine"))
    r = tmg.run("hello", env=tmg.env(TMG_MCP_WAIT="60", WEB_TOKEN="tok-static-1234567"))
    assert r.code == 0, r.err
    (line,) = [line for line in r.err.splitlines() if "MCP server web" in line]
    assert "check the token in MCP_SERVERS.web.HEADERS" in line, line
    r = tmg.run("mcp", "login", "web", env=tmg.env(WEB_TOKEN="tok-static-1234567"))
    assert r.code == 1 and "remove it to log in with OAuth instead" in r.err, r.err
    assert not server.lines("code")
