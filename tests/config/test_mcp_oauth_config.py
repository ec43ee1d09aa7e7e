"""MCP_SERVERS.<name>.OAUTH and WAIT (issue 24 items 4, 5, 7): validated like the other keys, each
problem one line naming the key, the client secret masked, an untrusted project's withheld."""

from __future__ import annotations

import pytest

from tmg.config.loader import load_config
from tmg.errors import ConfigError

BASE = "PROVIDERS:\n  local:\n    MODEL: openai/mock\n    API_KEY: k\nMEMORY:\n  ENABLED: false\n"


def load(tmp_path, server: str, env: dict[str, str] | None = None):
    path = tmp_path / "tmg.yaml"
    path.write_text(BASE + "MCP_SERVERS:\n  web:\n" + server)
    return load_config(str(path), env or {}, tmp_path)


def url_server(oauth: str) -> str:
    return "    URL: https://mcp.example.com/mcp\n    OAUTH:\n" + oauth


def test_a_client_id_and_secret_and_wait_are_read_and_the_secret_masked(tmp_path):
    config, warnings = load(tmp_path, url_server("      CLIENT_ID: tmg\n      CLIENT_SECRET: ${SECRET}\n"
                                                 "      SCOPES: [notes:read]\n      REDIRECT_PORT: 8765\n")
                            + "    WAIT: true\n", {"SECRET": "cs-0123456789abcdef"})
    server = config.mcp_servers["web"]
    assert warnings == [] and server.wait
    assert server.oauth is not None and (server.oauth.client_id, server.oauth.scopes) == ("tmg", ("notes:read",))
    assert server.oauth.token_auth == "client_secret_basic" and server.oauth.redirect_port == 8765
    assert "cs-0123456789abcdef" in config.secrets() and "cs-0123456789abcdef" not in repr(server.oauth)


@pytest.mark.parametrize("oauth, fault", [
    ("      CLIENT_SECRET: s3cret-value\n", "OAUTH.CLIENT_SECRET needs MCP_SERVERS.web.OAUTH.CLIENT_ID"),
    ("      GRANT: client_credentials\n", "GRANT client_credentials needs MCP_SERVERS.web.OAUTH.CLIENT_ID"),
    ("      CLIENT_ID: bot\n      GRANT: client_credentials\n", "needs MCP_SERVERS.web.OAUTH.CLIENT_SECRET or"),
    ("      CLIENT_ID: bot\n      GRANT: client_credentials\n      AUTH_METHOD: private_key_jwt\n",
     "private_key_jwt needs MCP_SERVERS.web.OAUTH.KEY_FILE"),
    ("      CLIENT_ID: bot\n      GRANT: client_credentials\n      KEY_FILE: /nowhere/key.pem\n", "KEY_FILE names no file"),
    ("      CLIENT_ID: bot\n      AUTH_METHOD: private_key_jwt\n", "private_key_jwt is for GRANT: client_credentials"),
    ("      CLIENT_METADATA_URL: http://example.com/client.json\n", "must be an https:// URL with a path"),
    ("      CLIENT_ID: x\n      CLIENT_METADATA_URL: https://example.com/c.json\n", "set it or"),
    ("      GRANT: password\n", "use one of: authorization_code, client_credentials"),
    ("      REDIRECT_PORT: 70000\n", "must be at most 65535"),
])
def test_an_oauth_block_that_cannot_work_is_an_error_naming_the_key(tmp_path, oauth, fault):
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, url_server(oauth))
    assert fault in str(raised.value), str(raised.value)
    assert "s3cret-value" not in str(raised.value)


def test_oauth_beside_an_authorization_header_is_an_error_and_on_a_stdio_server_a_warning(tmp_path):
    with pytest.raises(ConfigError, match="both give the server's credentials; keep one"):
        load(tmp_path, url_server("      CLIENT_ID: x\n") + "    HEADERS: {Authorization: Bearer abcdefgh12345}\n")
    _config, warnings = load(tmp_path, "    COMMAND: 'true'\n    OAUTH:\n      CLIENT_ID: x\n")
    assert warnings == ["MCP_SERVERS.web.OAUTH is ignored for a stdio server (use ENV); remove it"]


def test_a_key_file_others_can_read_is_a_warning(tmp_path):
    key = tmp_path / "client.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    key.chmod(0o644)
    _config, warnings = load(tmp_path, url_server(f"      CLIENT_ID: bot\n      GRANT: client_credentials\n"
                                                  f"      KEY_FILE: {key}\n"))
    assert warnings == ["MCP_SERVERS.web.OAUTH.KEY_FILE can be read by other users; make it private (chmod 600)"]
    key.chmod(0o600)
    config, warnings = load(tmp_path, url_server(f"      CLIENT_ID: bot\n      GRANT: client_credentials\n"
                                                 f"      KEY_FILE: {key}\n"))
    assert warnings == [] and config.mcp_servers["web"].oauth.token_auth == "private_key_jwt"


def test_an_untrusted_projects_oauth_client_is_withheld_with_its_server(tmp_path):
    (tmp_path / "xdg").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "tmg.yaml").write_text(BASE + "MCP_SERVERS:\n  theirs:\n" + url_server(
        "      CLIENT_ID: bot\n      CLIENT_SECRET: ${MY_SECRET}\n      GRANT: client_credentials\n"))
    config, warnings = load_config(None, {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "MY_SECRET": "cs-mine-1234567"},
                                   project)
    assert "theirs" not in config.mcp_servers
    assert any("MCP_SERVERS.theirs" in w and "tmg trust" in w for w in warnings), warnings
