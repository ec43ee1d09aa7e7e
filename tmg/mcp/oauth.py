"""OAuth for URL servers that require it, through the SDK's client support (issue 15 item 7).

A server asks for OAuth by answering 401 with an RFC 9728 `resource_metadata` challenge (what
the MCP authorization spec requires of it); one that answers a bare 401 wants a static token in
HEADERS instead, and a server given an `Authorization` header is never sent through OAuth.

The login is the authorization code grant with PKCE (the SDK's `OAuthClientProvider`: discovery,
dynamic client registration, the code exchange, refreshes) and a loopback redirect: tmg listens
on 127.0.0.1 for the one request the browser makes after the user approved, and prints the
authorization URL for the user to open. Only a person at a terminal can log in: the REPL or
`tmg mcp login NAME`. A one-shot never waits for a browser: without a usable stored login the
server is left out with one line saying how to log in.

What a login yields (tokens, their expiry, the client registration, the server's metadata) is
kept in `$XDG_CONFIG_HOME/tmg/mcp-oauth.json` beside the user's other private files (0600,
replaced atomically), keyed by the server's URL: a token is only ever sent to the URL it was
obtained for, whatever a config names the server, so no config can point a name at another
URL and be sent the user's tokens. Tokens read or stored are added to the process redactor:
an error that quotes one shows `***`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tmg.config.private_file import write_private_json
from tmg.redaction import process_redactor
from tmg.paths import user_config_dir

STORE_FILE = "mcp-oauth.json"
LOGIN_WAIT_S = 300.0  # how long a login waits for the browser to come back
CALLBACK_PATH = "/callback"
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

    def forget(self, url: str) -> bool:
        servers = self._load()
        if servers.pop(url, None) is None:
            return False
        write_private_json(self.path, {"version": 1, "servers": servers})
        return True


def _mask_tokens(tokens: Mapping[str, Any]) -> None:
    process_redactor().add(str(tokens.get(k) or "") for k in ("access_token", "refresh_token"))


class _Storage:
    """The SDK's TokenStorage over one URL's entry of the store; also keeps the expiry and the
    authorization server's metadata, which the SDK holds only in memory."""

    def __init__(self, store: OAuthStore, url: str) -> None:
        self.store = store
        self.url = url
        self.provider: Any = None  # set once the provider exists: its discovered metadata is stored

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        raw = self.store.entry(self.url).get("tokens")
        if not isinstance(raw, dict):
            return None
        _mask_tokens(raw)
        try:
            return OAuthToken.model_validate(raw)
        except ValueError:
            return None

    async def set_tokens(self, tokens: Any) -> None:
        raw = tokens.model_dump(mode="json", exclude_none=True)
        _mask_tokens(raw)
        fields: dict[str, Any] = {"tokens": raw,
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
        self.store.update(self.url, client=client_info.model_dump(mode="json", exclude_none=True))

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class LoopbackRedirect:
    """The redirect URI's listener: one request on 127.0.0.1:port, its code and state."""

    def __init__(self, port: int, server_name: str) -> None:
        self.port = port
        self.server_name = server_name
        self._server: asyncio.AbstractServer | None = None
        self._result: asyncio.Future[tuple[str | None, str | None, str | None]] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def listen(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", self.port)

    async def wait(self, bound: float) -> tuple[str | None, str | None, str | None]:
        """(code, state, iss) once the browser came back; raises OAuthFlowError on an error answer."""
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), bound)
        except asyncio.TimeoutError:
            from mcp.client.auth import OAuthFlowError

            raise OAuthFlowError(f"the login was not completed within {bound:g} s") from None
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass  # the headers: nothing in them matters
            parts = line.decode("latin-1").split()
            target = urlsplit(parts[1]) if len(parts) >= 2 else None
            if target is None or target.path != CALLBACK_PATH or self._result is None or self._result.done():
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            if "error" in query:
                from mcp.client.auth import OAuthFlowError

                reason = " ".join(f"{query['error']} {query.get('error_description', '')}".split())[:200]
                self._result.set_exception(OAuthFlowError(f"the authorization server refused the login ({reason})"))
                body = f"tmg: the login to {self.server_name} was refused ({reason}). You can close this tab."
            else:
                self._result.set_result((query.get("code"), query.get("state"), query.get("iss")))
                body = f"tmg: logged in to {self.server_name}. You can close this tab."
            data = body.encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         + f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
        except (asyncio.TimeoutError, OSError, UnicodeError):
            pass
        finally:
            try:
                await writer.drain()
                writer.close()
            except OSError:
                pass


def provider(server_name: str, url: str, store: OAuthStore, show: ShowLogin | None,
             on_person: Callable[[bool], None] = lambda _waiting: None,
             on_login_needed: Callable[[], None] = lambda: None) -> Any:
    """The SDK's OAuthClientProvider for `url`, its logins kept in `store`.

    `show` tells the person at the terminal where to log in; None (a one-shot) makes a needed
    login raise OAuthLoginNeeded instead of waiting. `on_person(True/False)` brackets the time
    a person is being waited for (the caller's start clock stops meanwhile).
    """
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    storage = _Storage(store, url)
    # The redirect URI is registered with the authorization server, which may hold it to the
    # exact port: the port registered before is used again while it is free.
    entry = store.entry(url)
    registered = (entry.get("client") or {}).get("redirect_uris") or []
    port = urlsplit(registered[0]).port if registered else None
    about_to_log_in = show is not None and not entry.get("tokens")
    if port is None or (about_to_log_in and not _port_free(port)):
        port = _free_port()
        if registered:
            store.update(url, client=None)  # registered for a port now taken: register again
    loopback = LoopbackRedirect(port, server_name)

    async def redirect(authorization_url: str) -> None:
        if show is None:
            on_login_needed()
            raise OAuthLoginNeeded(server_name)
        try:
            await loopback.listen()
        except OSError as exc:
            from mcp.client.auth import OAuthFlowError

            raise OAuthFlowError(f"cannot take the login's redirect on 127.0.0.1:{loopback.port} ({exc}); "
                                 f"`tmg mcp logout {server_name}` and log in again") from exc
        on_person(True)
        show(server_name, authorization_url)

    async def callback() -> Any:
        try:
            code, state, iss = await loopback.wait(LOGIN_WAIT_S)
        finally:
            on_person(False)
        return AuthorizationCodeResult(code=code or "", state=state, iss=iss)

    class _Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            await super()._initialize()
            # The SDK keeps the expiry and the server's metadata in memory only: without them a
            # stored token past its expiry would be sent as if valid, and refreshed at a guessed URL.
            self.context.token_expiry_time = storage.expires_at()
            if self.context.oauth_metadata is None:
                self.context.oauth_metadata = storage.metadata()

    metadata = OAuthClientMetadata(
        client_name="tmg", redirect_uris=[loopback.uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none")
    made = _Provider(url, metadata, storage, redirect_handler=redirect, callback_handler=callback)
    storage.provider = made
    return made


def has_oauth_challenge(response: Any) -> bool:
    """A 401 whose WWW-Authenticate names protected resource metadata (RFC 9728): the server
    wants an OAuth login, not a static token."""
    challenge = response.headers.get("www-authenticate", "")
    return response.status_code == 401 and "resource_metadata" in challenge.lower()

