"""OAuth as the MCP authorization spec discovers it (issue 24 item 1), through the real tmg: the
SDK's server auth with an in-memory authorization server (tests/support/oauth_mcp_server.py),
its metadata moved to each place a client must look (tests/support/oauth_layout.py). Whatever
the layout, `tmg mcp login` finds the login, and a one-shot before it says to log in, never to
set HEADERS.
"""

from __future__ import annotations

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.test_mcp_oauth import config, login, only_line_about_web
from tests.support.oauth_mcp import OAuthMcpServer

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

# layout -> the well-known URL the client found its way by (None: the 2025-03-26 default endpoints)
LAYOUTS = {
    "header": "/.well-known/oauth-protected-resource/mcp",
    "prm-path": "/.well-known/oauth-protected-resource/mcp",
    "prm-root": "/.well-known/oauth-protected-resource",
    "asm-openid-root": "/.well-known/openid-configuration",
    "asm-oauth-path": "/.well-known/oauth-authorization-server/auth",
    "asm-openid-path": "/.well-known/openid-configuration/auth",
    "legacy-metadata": "/.well-known/oauth-authorization-server",
    "legacy-defaults": None,
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_login_is_found_wherever_the_metadata_is(tmg, llm, tmp_path, layout):
    with OAuthMcpServer(tmp_path / "oauth.log", None, "--layout", layout) as server:
        tmg.write_config(config(server.url))
        out, _err = login(tmg)
        assert "logged in to MCP server web: 1 tool" in out, out
        found = [line.split() for line in server.lines("get")]
        if LAYOUTS[layout] is not None:
            assert [LAYOUTS[layout], "200"] in found, found
        else:  # nothing at any well-known URL: the default endpoints did it
            assert all(status == "404" for _path, status in found), found
        assert len(server.lines("code")) == 1 and server.lines("bearer")


@pytest.mark.parametrize("layout", ["prm-path", "legacy-defaults"])
def test_a_one_shot_before_the_login_says_to_log_in_not_to_set_headers(tmg, llm, tmp_path, layout):
    with OAuthMcpServer(tmp_path / "oauth.log", None, "--layout", layout) as server:
        tmg.write_config(config(server.url))
        llm.enqueue(Text("fine"))
        r = tmg.run("hello", env=tmg.env(TMG_MCP_WAIT="60"))
        assert (r.code, r.out) == (0, "fine\n"), r.err
        line = only_line_about_web(r.err)
        assert "needs an OAuth login" in line and "tmg mcp login web" in line and "HEADERS" not in line, line
        login(tmg)
        llm.enqueue(ToolCall("mcp_web_echo", {"text": "found"}), Text("done"))
        r = tmg.run("use it", env=tmg.env(TMG_MCP_WAIT="60"))
        assert (r.code, r.out) == (0, "done\n"), r.err
        assert "found" in llm.requests[-1]["messages"][-1]["content"]
