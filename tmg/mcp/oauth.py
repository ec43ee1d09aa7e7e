"""OAuth logins for URL servers that require them, through the SDK's client support (issue 15
item 7, issue 24): the logins kept, and what a connection needs to know of them.

A server asks for OAuth by answering 401: with an RFC 9728 `resource_metadata` challenge, or
without one when its metadata is at the well-known places (tmg.mcp.oauth_discovery); one whose
401 leads to no OAuth metadata wants a static token in HEADERS instead, and a server given an
`Authorization` header is never sent through OAuth. Which of the SDK's flows a server gets (a
login in a browser, a client registered beforehand, a headless grant) is tmg.mcp.oauth_provider's.

Only a person at a terminal can log in with a browser: the REPL or `tmg mcp login NAME`. A
one-shot never waits for one: without a usable stored login the server is left out with one line
saying how to log in (a headless grant, `OAUTH.GRANT: client_credentials`, needs no person).

What a login yields (tokens, their expiry, the client registration, the server's metadata, the
scope it was asked for) is kept in `$XDG_CONFIG_HOME/tmg/mcp-oauth.json` beside the user's other
private files (0600, replaced atomically), keyed by the server's URL: a token is only ever sent
to the URL it was obtained for, whatever a config names the server, so no config can point a
name at another URL and be sent the user's tokens. Tokens and secrets read or stored are added
to the process redactor: an error that quotes one shows `***`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tmg.config.private_file import write_private_json
from tmg.paths import user_config_dir
from tmg.redaction import process_redactor

STORE_FILE = "mcp-oauth.json"
# Shows the authorization URL to the person logging in: (server name, URL).
ShowLogin = Callable[[str, str], None]

# The SDK logs a failed flow with its traceback, which Python would print on stderr: the failure
# is said in one line by the caller instead.
logging.getLogger("mcp.client.auth").addHandler(logging.NullHandler())


def sets_authorization(headers: Mapping[str, str]) -> bool:
    """The server is given credentials of its own in HEADERS: OAuth is not for it."""
    return any(name.lower() == "authorization" for name in headers)


def login_line(server_name: str, url: str) -> str:
    """What the person logging in is told (the URL whole, on one line: a terminal may wrap it)."""
    return f"MCP server {server_name} needs you to log in: open this URL in a browser: {url}"


class OAuthLoginNeeded(Exception):
    """The server wants a login and nobody is here to give it (a one-shot): said in one line."""


class OAuthStore:
    """The stored OAuth logins, one per server URL."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_env(cls, env: Mapping[str, str]) -> OAuthStore:
        return cls(user_config_dir(env) / STORE_FILE)

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # none yet, or unreadable: a login writes it afresh
        servers = data.get("servers") if isinstance(data, dict) else None
        return servers if isinstance(servers, dict) else {}

    def entry(self, url: str) -> dict[str, Any]:
        entry = self._load().get(url)
        return entry if isinstance(entry, dict) else {}

    def has_login(self, url: str) -> bool:
        return bool(self.entry(url).get("tokens"))

    def update(self, url: str, **fields: Any) -> None:
        servers = self._load()
        servers[url] = {**(servers.get(url) if isinstance(servers.get(url), dict) else {}), **fields}
        write_private_json(self.path, {"version": 1, "servers": servers})

    def wants_wider_login(self, url: str) -> bool:
        """A step-up asked for more scope than the stored login was granted: a new login is due."""
        entry = self.entry(url)
        wanted = set(str(entry.get("scope") or "").split())
        granted = set(str((entry.get("tokens") or {}).get("scope") or "").split())
        return bool(wanted - granted) and bool(entry.get("tokens"))

    def forget(self, url: str) -> bool:
        servers = self._load()
        if servers.pop(url, None) is None:
            return False
        write_private_json(self.path, {"version": 1, "servers": servers})
        return True


def _mask_tokens(tokens: Mapping[str, Any]) -> None:
    process_redactor().add(str(tokens.get(k) or "") for k in ("access_token", "refresh_token"))


class Storage:
    """The SDK's TokenStorage over one URL's entry of the store; also keeps the expiry, the
    authorization server's metadata and the scope last asked for, which the SDK holds only in
    memory.

    `client_id`: a client registered beforehand (OAUTH.CLIENT_ID): the tokens of another client
    (the config changed) are not used, and no registration is stored."""

    def __init__(self, store: OAuthStore, url: str, client_id: str | None = None) -> None:
        self.store = store
        self.url = url
        self.client_id = client_id
        self.provider: Any = None  # set once the provider exists: its discovered metadata is stored

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        entry = self.store.entry(self.url)
        raw = entry.get("tokens")
        if not isinstance(raw, dict) or (self.client_id is not None and entry.get("client_id") != self.client_id):
            return None
        _mask_tokens(raw)
        try:
            return OAuthToken.model_validate(raw)
        except ValueError:
            return None

    async def set_tokens(self, tokens: Any) -> None:
        raw = tokens.model_dump(mode="json", exclude_none=True)
        _mask_tokens(raw)
        fields: dict[str, Any] = {"tokens": raw, "client_id": self.client_id,
                                  "expires_at": time.time() + int(tokens.expires_in) if tokens.expires_in else None}
        metadata = getattr(getattr(self.provider, "context", None), "oauth_metadata", None)
        if metadata is not None:
            fields["metadata"] = metadata.model_dump(mode="json", exclude_none=True)
        self.store.update(self.url, **fields)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self.store.entry(self.url).get("client")
        if isinstance(raw, dict):
            process_redactor().add([str(raw.get("client_secret") or "")])
        try:
            return OAuthClientInformationFull.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None

    async def set_client_info(self, client_info: Any) -> None:
        process_redactor().add([client_info.client_secret or ""])
        if self.client_id is None:  # a client registered beforehand is the config's, never stored
            self.store.update(self.url, client=client_info.model_dump(mode="json", exclude_none=True))

    def wanted_scope(self) -> str | None:
        """The scope the last login asked for (a step-up widens it): the next login asks for it too."""
        value = self.store.entry(self.url).get("scope")
        return value if isinstance(value, str) and value else None

    def want_scope(self, scope: str | None) -> None:
        if scope and scope != self.wanted_scope():
            self.store.update(self.url, scope=scope)

    def expires_at(self) -> float | None:
        value = self.store.entry(self.url).get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    def metadata(self) -> Any:
        from mcp.shared.auth import OAuthMetadata

        raw = self.store.entry(self.url).get("metadata")
        try:
            return OAuthMetadata.model_validate(raw) if isinstance(raw, dict) else None
        except ValueError:
            return None


def has_oauth_challenge(response: Any) -> bool:
    """A 401 whose WWW-Authenticate names protected resource metadata (RFC 9728): the server
    wants an OAuth login, not a static token."""
    challenge = response.headers.get("www-authenticate", "")
    return response.status_code == 401 and "resource_metadata" in challenge.lower()

