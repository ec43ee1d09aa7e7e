"""An MCP server over Streamable HTTP that requires OAuth, and its own authorization server:
`python tests/support/oauth_mcp_server.py PORT --log FILE`.

Built on the SDK's server auth support: protected resource metadata (RFC 9728), authorization
server metadata, dynamic client registration, /authorize and /token (PKCE checked by the SDK),
and bearer checks on /mcp (401 with a `resource_metadata` challenge). The authorization server
is in memory and approves every request at once: GET the authorization URL a client shows and
it redirects to the client's redirect URI with a code (the test plays the browser).

One line per grant goes to `--log` (`code ACCESS` or `refresh ACCESS`), so a test can tell a
login from a refresh and know the tokens issued, and one per bearer token presented to /mcp
(`bearer TOKEN`), so it can tell which tokens reached this server. Tool: `echo(text)`.
"""

from __future__ import annotations

import argparse
import secrets
import time

import uvicorn
from mcp.server.auth.provider import (AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken,
                                      construct_redirect_uri)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import ToolAnnotations


class ApprovingProvider:
    """An authorization server that says yes to everyone: codes, tokens and clients in memory."""

    def __init__(self, log: str, expires_in: int) -> None:
        self.log = log
        self.expires_in = expires_in
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    def _note(self, line: str) -> None:
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, grant: str) -> OAuthToken:
        access, refresh = "at-" + secrets.token_hex(16), "rt-" + secrets.token_hex(16)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.expires_in, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self._note(f"{grant} {access}")
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=self.expires_in,
                          scope=" ".join(scopes) or None, refresh_token=refresh)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(code.code, None)
        return self._issue(code.client_id, code.scopes, code.resource, "code")

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource, "refresh")

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build(port: int, log: str, expires_in: int) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "echo-oauth",
        auth_server_provider=ApprovingProvider(log, expires_in),
        auth=AuthSettings(issuer_url=base, resource_server_url=f"{base}/mcp", validate_token_resource=False,
                          client_registration_options=ClientRegistrationOptions(enabled=True)),
    )

    @server.tool(description="Answer the text back, unchanged.", annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        return text

    return server


def noting_bearers(app, log: str):
    """The app, with each bearer token presented to /mcp written to `log`."""
    async def noting(scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            value = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
            if value.lower().startswith("bearer "):
                with open(log, "a", encoding="utf-8") as f:
                    f.write(f"bearer {value[7:].strip()}\n")
        await app(scope, receive, send)

    return noting


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--log", required=True)
    parser.add_argument("--expires-in", type=int, default=3600)
    args = parser.parse_args()
    app = noting_bearers(build(args.port, args.log, args.expires_in).streamable_http_app(), args.log)
    uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="on")).run()


if __name__ == "__main__":
    main()
