"""A URL server's credentials as one connection meets them: a 401 or 403 kept to be said as such
(the SDK says only "an error response"), an OAuth challenge noticed, and the SDK's OAuth provider
(tmg.mcp.oauth) once a login is stored or the server asked for one.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from tmg.mcp.errors import leaf
from tmg.mcp.spec import ServerSpec

if TYPE_CHECKING:
    from tmg.mcp.oauth import OAuthStore, ShowLogin


class UrlServerAuth:
    """The credentials part of a connection (McpConnection)."""

    spec: ServerSpec
    start_timeout: float
    oauth_store: OAuthStore | None  # where logins are kept (None: never OAuth)
    show_login: ShowLogin | None  # who is shown where to log in (None: nobody, a one-shot)
    _oauth: bool  # the server wants OAuth: requests go through the SDK's OAuth provider
    _oauth_challenged: bool  # a 401 asked for an OAuth login (RFC 9728 resource_metadata)
    _login_needed: bool  # a login was needed and nobody could give it
    _http_refusal: int | None  # 401/403 from the server
    _start_clock: asyncio.Timeout | None

    async def _note_refusal(self, response: Any) -> None:
        """The SDK turns a 401 or 403 into "Server returned an error response": keep the status."""
        from tmg.mcp.oauth import has_oauth_challenge

        if response.status_code in (401, 403):
            self._http_refusal = response.status_code
        if has_oauth_challenge(response):
            self._oauth_challenged = True

    def _wants_oauth_login(self) -> bool:
        """The server asked for an OAuth login, and this connection has not tried one yet."""
        return self._oauth_challenged and not self._oauth and self._can_oauth()

    def _can_oauth(self) -> bool:
        """OAuth is for URL servers not given credentials of their own in HEADERS."""
        from tmg.mcp.oauth import sets_authorization

        return self.spec.url is not None and not sets_authorization(self.spec.headers)

    def _oauth_provider(self) -> Any:
        """The SDK's OAuth provider (httpx auth) when the server wants OAuth or a login is stored; else None."""
        if not self._can_oauth() or self.oauth_store is None:
            return None
        from tmg.mcp.oauth import provider

        assert self.oauth_store is not None and self.spec.url is not None
        if not self._oauth and not self.oauth_store.has_login(self.spec.url):
            return None
        self._oauth = True
        return provider(self.spec.name, self.spec.url, self.oauth_store, self.show_login,
                        on_person=self._waiting_on_person, on_login_needed=self._note_login_needed)

    def _waiting_on_person(self, waiting: bool) -> None:
        """A person is logging in: the start's clock stops meanwhile, and restarts once they are back."""
        clock = self._start_clock
        if clock is not None:
            clock.reschedule(None if waiting else asyncio.get_running_loop().time() + self.start_timeout)

    def _note_login_needed(self) -> None:
        self._login_needed = True

    def _login_line(self) -> str:
        name = self.spec.name
        stored = self.oauth_store is not None and self.spec.url is not None and self.oauth_store.has_login(self.spec.url)
        why = "its stored OAuth login was refused" if stored else "it needs an OAuth login"
        return f"{name}: {why}; log in with `tmg mcp login {name}`, or run tmg without a prompt"

    def _refusal_line(self) -> str:
        name, status = self.spec.name, self._http_refusal
        where = f"MCP_SERVERS.{name}.HEADERS"
        if status == 403:
            return f"{name}: the server answered 403 Forbidden: the credentials in {where} are not allowed in"
        if self.spec.headers:
            return f"{name}: the server answered 401 Unauthorized: check the token in {where}"
        return (f"{name}: the server answered 401 Unauthorized: it needs credentials; set {where} "
                f"(e.g. Authorization: \"Bearer ${{{_env_name(name)}_TOKEN}}\")")


def oauth_failure(exc: BaseException) -> bool:
    """The SDK's OAuth flow failed (discovery, registration, the code exchange, the login itself)."""
    from mcp.client.auth import OAuthFlowError

    exc = leaf(exc)
    return isinstance(exc, OAuthFlowError)


def _env_name(server: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in server).upper()
