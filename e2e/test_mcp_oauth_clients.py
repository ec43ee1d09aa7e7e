"""The user's own OAuth client for a URL server (issue 24 items 2, 4, 5), through the real tmg and
the OAuth test server (tests/support/oauth_mcp_server.py): a client registered beforehand where
the server offers no dynamic registration, the client credentials grant from a one-shot (a
secret, or a JWT signed with a key file), a Client ID Metadata Document, and a step-up to a wider
scope inside a REPL session.
"""

from __future__ import annotations

import json
import os

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_oauth import login, store_path, stored_text
from e2e.tmux import Terminal, tmux_available
from tests.support.http_mcp import free_port
from tests.support.oauth_mcp import AUTHORIZATION_URL, OAuthMcpServer, approve

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

SECRET = "cs-canary-7d1e5b2a9f30c4e8"


def config(url: str, oauth: str = "") -> str:
    return f"MCP_SERVERS:\n  web:\n    URL: {url}\n    TIMEOUT: 30\n" + (f"    OAUTH:\n{oauth}" if oauth else "")


def tool_answer(llm) -> str:
    return llm.requests[-1]["messages"][-1]["content"]


def test_a_server_without_registration_takes_the_configured_client_id_and_secret(tmg, llm, tmp_path):
    port = free_port()
    with OAuthMcpServer(tmp_path / "oauth.log", None, "--no-registration", "--client", f"tmg-cli:{SECRET}:{port}") as server:
        tmg.write_config(config(server.url, f"      CLIENT_ID: tmg-cli\n      CLIENT_SECRET: ${{WEB_SECRET}}\n"
                                            f"      REDIRECT_PORT: {port}\n"))
        env = tmg.env(WEB_SECRET=SECRET, TMG_MCP_WAIT="60")
        out, err = login(tmg, env=env)
        assert "logged in to MCP server web: 1 tool" in out, out + err
        assert server.lines("authorize") == ["tmg-cli -"] and not server.lines("register")
        llm.enqueue(ToolCall("mcp_web_echo", {"text": "pre-registered"}), Text("done"))
        r = tmg.run("use it", env=env)
        assert (r.code, r.out) == (0, "done\n"), r.err
        assert "pre-registered" in tool_answer(llm)
        assert SECRET not in store_path(tmg).read_text() and SECRET not in out + err + r.err + stored_text(tmg)
        shown = tmg.run("config", env=env)
        assert "CLIENT_SECRET: cs-…***" in shown.out and SECRET not in shown.out + shown.err


def test_a_one_shot_gets_its_own_token_with_client_credentials_and_a_secret(tmg, llm, tmp_path):
    with OAuthMcpServer(tmp_path / "oauth.log", None, "--no-registration", "--cc-client", f"ci-bot:{SECRET}") as server:
        tmg.write_config(config(server.url, "      CLIENT_ID: ci-bot\n      CLIENT_SECRET: ${WEB_SECRET}\n"
                                            "      GRANT: client_credentials\n"))
        llm.enqueue(ToolCall("mcp_web_echo", {"text": "headless"}), Text("done"))
        r = tmg.run("use it", env=tmg.env(WEB_SECRET=SECRET, TMG_MCP_WAIT="60"))
        assert (r.code, r.out) == (0, "done\n"), r.err
        assert "headless" in tool_answer(llm) and "log in" not in r.err
        (token,) = server.lines("client_credentials")
        assert token in server.lines("bearer") and not server.lines("code")
        assert SECRET not in r.err + stored_text(tmg) + store_path(tmg).read_text()


def test_client_credentials_signed_with_a_key_file_and_a_wrong_secret_is_one_line(tmg, llm, tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private, public = tmp_path / "client.pem", tmp_path / "client.pub"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    os.chmod(private, 0o600)
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    with OAuthMcpServer(tmp_path / "oauth.log", None, "--no-registration", "--jwt-client", f"ci-jwt:{public}",
                        "--cc-client", f"ci-bot:{SECRET}") as server:
        tmg.write_config(config(server.url, f"      CLIENT_ID: ci-jwt\n      GRANT: client_credentials\n"
                                            f"      KEY_FILE: {private}\n"))
        llm.enqueue(ToolCall("mcp_web_echo", {"text": "signed"}), Text("done"))
        r = tmg.run("use it", env=tmg.env(TMG_MCP_WAIT="60"))
        assert (r.code, r.out) == (0, "done\n"), r.err
        assert "signed" in tool_answer(llm) and len(server.lines("client_credentials")) == 1

        tmg.write_config(config(server.url, "      CLIENT_ID: ci-bot\n      CLIENT_SECRET: cs-wrong-000000000000\n"
                                            "      GRANT: client_credentials\n"))
        llm.enqueue(Text("fine"))
        r = tmg.run("hello", env=tmg.env(TMG_MCP_WAIT="60"))
        assert (r.code, r.out) == (0, "fine\n"), r.err
        (line,) = [line for line in r.err.splitlines() if "MCP server web" in line]
        assert "client credentials were refused" in line and "MCP_SERVERS.web.OAUTH" in line, line
        assert "cs-wrong-000000000000" not in r.err


def test_a_client_metadata_document_url_is_the_client_id_where_the_server_supports_it(tmg, llm, tmp_path):
    document = "https://tmg.example/oauth/client.json"
    with OAuthMcpServer(tmp_path / "oauth.log", None, "--cimd", document) as server:
        tmg.write_config(config(server.url, f"      CLIENT_METADATA_URL: {document}\n"))
        out, err = login(tmg)
        assert "logged in to MCP server web: 1 tool" in out, out + err
        assert server.lines("authorize") == [f"{document} -"]
        assert not server.lines("register")  # no dynamic registration: the URL is the client id
        assert json.loads(store_path(tmg).read_text())["servers"][server.url]["client"]["client_id"] == document


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_a_call_that_needs_a_wider_scope_logs_in_again_inside_the_repl_and_runs(tmg, llm, tmp_path):
    with OAuthMcpServer(tmp_path / "oauth.log", None, "--step-up") as server:
        tmg.write_config(config(server.url))
        login(tmg)
        assert server.lines("authorize")[0].endswith(" notes:read")
        llm.enqueue(ToolCall("mcp_web_write_note", {"text": "milk"}), Text("noted it"))
        term = Terminal(width=600, height=40)  # the URL on one line
        try:
            term.start_tmg(tmg, TMG_MCP_WAIT="60")
            term.ask("note milk")
            screen = term.wait_for(lambda s: len(AUTHORIZATION_URL.findall(s)) == 1, timeout=30)
            assert "MCP server web needs you to log in" in screen
            assert "logged in to web" in approve(AUTHORIZATION_URL.search(screen).group(1))
            term.wait_for("noted it")
            shown = term.scrollback()
        finally:
            term.close()
        assert "lost its connection" not in shown and "RuntimeError" not in shown
        assert tool_answer(llm) == "noted: milk"
        assert server.lines("authorize")[-1].endswith(" notes:read notes:write")
        assert len(server.lines("code")) == 2


def test_a_one_shot_that_needs_a_wider_scope_says_so_and_a_new_login_asks_for_it(tmg, llm, tmp_path):
    with OAuthMcpServer(tmp_path / "oauth.log", None, "--step-up") as server:
        tmg.write_config(config(server.url))
        login(tmg)
        llm.enqueue(ToolCall("mcp_web_write_note", {"text": "milk"}), Text("could not"))
        r = tmg.run("note milk", env=tmg.env(TMG_MCP_WAIT="60"))
        assert (r.code, r.out) == (0, "could not\n"), r.err
        (line,) = [line for line in r.err.splitlines() if line.startswith("tmg: warning: MCP server web")]
        assert "wants a new OAuth login for this call" in line and "tmg mcp login web" in line, line
        assert "lost its connection" not in r.err and "did not run" in tool_answer(llm)
        out, _err = login(tmg)
        assert "logged in to MCP server web" in out
        assert server.lines("authorize")[-1].endswith(" notes:read notes:write")
        llm.enqueue(ToolCall("mcp_web_write_note", {"text": "eggs"}), Text("noted"))
        r = tmg.run("note eggs", env=tmg.env(TMG_MCP_WAIT="60"))
        assert (r.code, r.out) == (0, "noted\n"), r.err
        assert tool_answer(llm) == "noted: eggs"
