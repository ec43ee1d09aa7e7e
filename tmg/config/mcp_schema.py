"""The keys of one MCP_SERVERS entry, its OAUTH client block among them (read by tmg.config.schema)."""

from __future__ import annotations

from tmg.config.key import DAY as _DAY
from tmg.config.key import Key

OAUTH_GRANTS = ("authorization_code", "client_credentials")
OAUTH_AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")

MCP_OAUTH = {
    "CLIENT_ID": Key("str", ""),
    "CLIENT_SECRET": Key("str", "", secret=True),
    "SCOPES": Key("str_list", [], example="[notes:read, notes:write]"),
    "GRANT": Key("choice", "authorization_code", choices=OAUTH_GRANTS),
    # At the token endpoint; unset: private_key_jwt with a KEY_FILE, client_secret_basic with a secret, else none.
    "AUTH_METHOD": Key("choice", "", choices=OAUTH_AUTH_METHODS),
    "KEY_FILE": Key("str", "", example="~/.config/tmg/mcp-client.pem"),  # private_key_jwt's signing key (PEM)
    "KEY_ALGORITHM": Key("choice", "RS256", choices=("RS256", "RS384", "RS512", "ES256", "ES384", "PS256")),
    "ISSUER": Key("url", "", example="https://auth.example.com"),  # the credentials are sent nowhere else
    # A Client ID Metadata Document: this URL is the client id where the server supports it.
    "CLIENT_METADATA_URL": Key("url", "", example="https://example.com/tmg-client.json"),
    "REDIRECT_PORT": Key("int", None, minimum=1, maximum=65535, example="8765"),  # a registered client's loopback port
}

MCP_SERVER = {
    "COMMAND": Key("str", ""),
    "ARGS": Key("str_list", []),
    "ENV": Key("str_map", {}),
    "DIR": Key("str", ""),
    "URL": Key("url", "", example="http://localhost:8000/mcp"),
    "HEADERS": Key("str_map", {}, secret=True),  # sent with every request to a URL server
    "TIMEOUT": Key("number", 30.0, minimum=0.1, maximum=_DAY),
    # A tool call's bound: seconds of silence (default TOOL_TIMEOUT), each progress notification
    # restarting it, and the most a call may take however much progress it reports.
    "CALL_TIMEOUT": Key("number", None, minimum=0.1, maximum=_DAY),
    "CALL_TIMEOUT_MAX": Key("number", 600.0, minimum=0.1, maximum=_DAY),
    "REQUIRES_CONSENT": Key("bool", False),
    # The server may ask the session's model for a completion (MCP sampling), each request
    # judged by the permission engine (`sampling_<name>` in PERMISSIONS rules); off: declined.
    "SAMPLING": Key("bool", False, hot=False),
    "WARM": Key("bool", False),  # kept running between runs by the memory broker (stdio servers)
    "WAIT": Key("bool", False),  # a prompt waits for it while it starts (else its tools join once it is ready)
    # The user's own OAuth client for a URL server (tmg.mcp.oauth_provider); unset: dynamic registration.
    "OAUTH": Key("block", {}, fields=MCP_OAUTH),
    # Which of the server's tools are offered: glob patterns on the server's own tool names.
    "TOOLS": Key("block", {}, fields={"INCLUDE": Key("str_list", []), "EXCLUDE": Key("str_list", [])}),
}
