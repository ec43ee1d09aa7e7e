"""Which of the SDK's OAuth providers (httpx auth) a URL server gets, from its `OAUTH` config:

- none: the authorization code grant with PKCE and a loopback redirect, the client registered
  dynamically (RFC 7591) where the server offers it: the SDK's `OAuthClientProvider`, which also
  does the discovery (the `resource_metadata` of a 401, the protected resource metadata at the
  path-inserted and root well-known URLs, authorization server metadata under both names and
  both forms, and a 2025-03-26 server's root metadata, then its default endpoints), refreshes,
  and a step-up to a wider scope on a 403 `insufficient_scope`;
- `CLIENT_ID` (and `CLIENT_SECRET`): the same login with a client registered beforehand, for a
  server without dynamic registration (`REDIRECT_PORT`: the loopback port it was registered with);
- `CLIENT_METADATA_URL`: a Client ID Metadata Document: the URL is the client id where the
  authorization server says it supports them, else the client registers dynamically;
- `GRANT: client_credentials`: no person and no browser, for CI and one-shots: the client
  authenticates with `client_secret_basic`/`client_secret_post` (`ClientCredentialsOAuthProvider`)
  or a JWT signed with `KEY_FILE` (`private_key_jwt`, RFC 7523: `PrivateKeyJWTOAuthProvider`).

What tmg adds to each: the expiry and the server's metadata kept across runs (the SDK holds them
in memory only: a stored token past its expiry would be sent as if valid), and the scope asked
for (`SCOPES`, widened by a step-up) kept and asked for again by the next login, which the SDK
would otherwise narrow to what the server's 401 names.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tmg.mcp.oauth import OAuthLoginNeeded, OAuthStore, ShowLogin, Storage
from tmg.mcp.oauth_loopback import LoopbackRedirect, free_port, port_free
from tmg.redaction import process_redactor

if TYPE_CHECKING:
    from tmg.config.model import OAuthClientConfig

LOGIN_WAIT_S = 300.0  # how long a login waits for the browser to come back


def headless(config: OAuthClientConfig | None) -> bool:
    """The client gets its tokens without a person (client credentials): a one-shot may log in."""
    return config is not None and config.grant == "client_credentials"


def provider(server_name: str, url: str, store: OAuthStore, show: ShowLogin | None,
             config: OAuthClientConfig | None = None, *,
             on_person: Callable[[bool], None] = lambda _waiting: None,
             on_login_needed: Callable[[], None] = lambda: None) -> Any:
    """The SDK's OAuth provider for `url` as `config` (OAUTH) chooses it, its logins kept in `store`.

    `show` tells the person at the terminal where to log in; None (a one-shot) makes a needed
    browser login raise OAuthLoginNeeded instead of waiting. `on_person(True/False)` brackets
    the time a person is being waited for (the caller's clocks stop meanwhile)."""
    scope = " ".join(config.scopes) if config is not None and config.scopes else None
    if headless(config):
        assert config is not None
        return _client_credentials(url, store, config, scope)
    return _authorization_code(server_name, url, store, show, config, scope, on_person, on_login_needed)


def _keeping(base: type, storage: Storage, scope: str | None) -> type:
    """`base` (one of the SDK's providers) with what tmg adds: the expiry, the metadata and the
    scope kept across runs."""
    from mcp.client.auth.utils import union_scopes

    class Kept(base):  # type: ignore[misc, valid-type]
        async def _initialize(self) -> None:
            await super()._initialize()
            self.context.token_expiry_time = storage.expires_at()
            if self.context.oauth_metadata is None:
                self.context.oauth_metadata = storage.metadata()

        async def _perform_authorization(self) -> Any:
            # The SDK sets the scope from the 401's challenge; what the config asks for and what a
            # step-up widened it to are asked for too, and remembered for the next login.
            wanted = union_scopes(union_scopes(scope, storage.wanted_scope()), self.context.client_metadata.scope)
            self.context.client_metadata.scope = wanted
            storage.want_scope(wanted)
            return await super()._perform_authorization()

    return Kept


def _authorization_code(server_name: str, url: str, store: OAuthStore, show: ShowLogin | None,
                        config: OAuthClientConfig | None, scope: str | None,
                        on_person: Callable[[bool], None], on_login_needed: Callable[[], None]) -> Any:
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    fixed_id = config.client_id if config is not None and config.client_id else None
    storage = Storage(store, url, client_id=fixed_id)
    loopback = LoopbackRedirect(_redirect_port(store, url, show, config), server_name)

    async def redirect(authorization_url: str) -> None:
        if show is None:
            on_login_needed()
            raise OAuthLoginNeeded(server_name)
        try:
            await loopback.listen()
        except OSError as exc:
            from mcp.client.auth import OAuthFlowError

            fix = (f"free the port or change MCP_SERVERS.{server_name}.OAUTH.REDIRECT_PORT" if config and config.redirect_port
                   else f"`tmg mcp logout {server_name}` and log in again")
            raise OAuthFlowError(f"cannot take the login's redirect on 127.0.0.1:{loopback.port} ({exc}); {fix}") from exc
        on_person(True)
        show(server_name, authorization_url)

    async def callback() -> Any:
        try:
            code, state, iss = await loopback.wait(LOGIN_WAIT_S)
        finally:
            on_person(False)
        return AuthorizationCodeResult(code=code or "", state=state, iss=iss)

    secret = config.client_secret if config is not None else ""
    method = config.token_auth if config is not None else "none"
    metadata = OAuthClientMetadata(
        client_name="tmg", redirect_uris=[loopback.uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none" if fixed_id is None else method, scope=scope)
    fixed = None
    if fixed_id is not None:
        assert config is not None
        process_redactor().add([secret])
        fixed = OAuthClientInformationFull(
            client_id=fixed_id, client_secret=secret or None, redirect_uris=[loopback.uri],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"], token_endpoint_auth_method=method,
            issuer=config.issuer or None)

    class Provider(_keeping(OAuthClientProvider, storage, scope)):  # type: ignore[misc]
        async def _initialize(self) -> None:
            await super()._initialize()
            if fixed is not None:  # the client registered beforehand: never registered here
                self.context.client_info = fixed

    made = Provider(url, metadata, storage, redirect_handler=redirect, callback_handler=callback,
                    client_metadata_url=(config.client_metadata_url or None) if config is not None else None)
    storage.provider = made
    return made


def _redirect_port(store: OAuthStore, url: str, show: ShowLogin | None, config: OAuthClientConfig | None) -> int:
    """The loopback port of the redirect URI: the one a client registered beforehand was registered
    with (REDIRECT_PORT); else the one a dynamic registration named, while it is free (the
    authorization server may hold the client to it exactly); else any free one."""
    if config is not None and config.redirect_port:
        return config.redirect_port
    entry = store.entry(url)
    registered = (entry.get("client") or {}).get("redirect_uris") or []
    port = urlsplit(registered[0]).port if registered else None
    about_to_log_in = show is not None and not entry.get("tokens")
    if port is None or (about_to_log_in and not port_free(port)):
        port = free_port()
        if registered:
            store.update(url, client=None)  # registered for a port now taken: register again
    return port


def _client_credentials(url: str, store: OAuthStore, config: OAuthClientConfig, scope: str | None) -> Any:
    """The client credentials grant (no person): a secret (basic or post), or a JWT signed with KEY_FILE."""
    from mcp.client.auth.extensions.client_credentials import (ClientCredentialsOAuthProvider,
                                                               PrivateKeyJWTOAuthProvider, SignedJWTParameters)

    storage = Storage(store, url, client_id=config.client_id)
    issuer = config.issuer or None
    with warnings.catch_warnings():
        # Without ISSUER the server's advertised authorization server is used; the SDK warns that
        # this will be required one day: the config's documentation says so instead.
        warnings.simplefilter("ignore")
        if config.token_auth == "private_key_jwt":
            key = Path(config.key_file).expanduser().read_text(encoding="utf-8")
            signer = SignedJWTParameters(issuer=config.client_id, subject=config.client_id, signing_key=key,
                                         signing_algorithm=config.key_algorithm)
            made = _keeping(PrivateKeyJWTOAuthProvider, storage, scope)(
                url, storage, config.client_id, signer.create_assertion_provider(), scope=scope, issuer=issuer)
        else:
            process_redactor().add([config.client_secret])
            method = config.token_auth if config.token_auth == "client_secret_post" else "client_secret_basic"
            made = _keeping(ClientCredentialsOAuthProvider, storage, scope)(
                url, storage, config.client_id, config.client_secret, token_endpoint_auth_method=method,
                scope=scope, issuer=issuer)
    storage.provider = made
    return made
