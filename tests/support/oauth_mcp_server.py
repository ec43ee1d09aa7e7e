"""An MCP server over Streamable HTTP that requires OAuth, and its own authorization server:
`python tests/support/oauth_mcp_server.py PORT --log FILE [options]`.

Built on the SDK's server auth support: protected resource metadata (RFC 9728), authorization
server metadata, dynamic client registration, /authorize and /token (PKCE checked by the SDK),
and bearer checks on /mcp (401 with a `resource_metadata` challenge). The authorization server
is in memory and approves every request at once: GET the authorization URL a client shows and
it redirects to the client's redirect URI with a code (the test plays the browser).

Options arrange what a client must cope with (oauth_layout.py moves the SDK's URLs about):
  --layout NAME          where the metadata is found (LAYOUTS in oauth_layout.py; default: header)
  --no-registration      no dynamic client registration
  --client ID:SECRET:PORT  a client registered beforehand (redirect http://127.0.0.1:PORT/callback)
  --cc-client ID:SECRET  a client for the client credentials grant (client_secret_basic or _post)
  --jwt-client ID:PEM    a client for the client credentials grant with private_key_jwt (its public key)
  --cimd URL             Client ID Metadata Documents supported; URL is a document the server knows
  --step-up              tools need scope notes:read; `write_note` needs notes:write too (403 insufficient_scope)

One line per event goes to `--log`: `code ACCESS`, `refresh ACCESS`, `client_credentials ACCESS`
(a token issued by that grant), `register CLIENT_ID`, `authorize CLIENT_ID SCOPES`,
`bearer TOKEN` (presented to /mcp), `get PATH STATUS` (each well-known URL asked for). Tools:
`echo(text)`, and with --step-up `write_note(text)`.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import uvicorn  # noqa: E402
from mcp.server.auth.provider import (AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken,  # noqa: E402
                                      construct_redirect_uri)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402
from oauth_layout import LAYOUTS, Arranged, LoopbackClient  # noqa: E402

READ, WRITE = "notes:read", "notes:write"


class ApprovingProvider:
    """An authorization server that says yes to everyone: codes, tokens and clients in memory."""

    def __init__(self, log: str, expires_in: int, scopes: list[str] | None) -> None:
        self.log = log
        self.expires_in = expires_in
        self.scopes = scopes  # every scope a client may ask for (None: scopes are not used)
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    def note(self, line: str) -> None:
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        if self.scopes:
            client_info.scope = " ".join(self.scopes)  # RFC 7591 lets the server grant what it will
        self.clients[client_info.client_id] = client_info
        self.note(f"register {client_info.client_id}")

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        self.note(f"authorize {client.client_id} {' '.join(params.scopes or []) or '-'}")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def issue(self, client_id: str, scopes: list[str], resource: str | None, grant: str,
              refreshable: bool = True) -> OAuthToken:
        access, refresh = "at-" + secrets.token_hex(16), "rt-" + secrets.token_hex(16)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + self.expires_in, resource=resource)
        if refreshable:
            self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.note(f"{grant} {access}")
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=self.expires_in,
                          scope=" ".join(scopes) or None, refresh_token=refresh if refreshable else None)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(code.code, None)
        return self.issue(code.client_id, code.scopes, code.resource, "code")

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self.issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource, "refresh")

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def build(base: str, issuer: str, provider: ApprovingProvider, registration: bool, step_up: bool) -> MCPServer:
    server = MCPServer(
        "echo-oauth",
        auth_server_provider=provider,
        auth=AuthSettings(issuer_url=issuer, resource_server_url=f"{base}/mcp", validate_token_resource=False,
                          required_scopes=[READ] if step_up else None,
                          client_registration_options=ClientRegistrationOptions(
                              enabled=registration, valid_scopes=provider.scopes)),
    )

    @server.tool(description="Answer the text back, unchanged.", annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        return text

    if step_up:
        @server.tool(description="Keep a note (needs the notes:write scope).",
                     annotations=ToolAnnotations(read_only_hint=True))  # "read only" so no consent is asked
        def write_note(text: str) -> str:
            return f"noted: {text}"

    return server


def _pair(text: str, parts: int) -> list[str]:
    values = text.split(":", parts - 1)
    if len(values) != parts:
        raise SystemExit(f"expected {parts} parts separated by ':', got {text!r}")
    return values


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--log", required=True)
    parser.add_argument("--expires-in", type=int, default=3600)
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default="header")
    parser.add_argument("--no-registration", action="store_true")
    parser.add_argument("--client")
    parser.add_argument("--cc-client")
    parser.add_argument("--jwt-client")
    parser.add_argument("--cimd")
    parser.add_argument("--step-up", action="store_true")
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    layout = LAYOUTS[args.layout]
    issuer = base + layout.issuer_path
    provider = ApprovingProvider(args.log, args.expires_in, [READ, WRITE] if args.step_up else None)
    scope = " ".join(provider.scopes or []) or None
    if args.client:
        client_id, secret, port = _pair(args.client, 3)
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id, client_secret=secret, redirect_uris=[f"http://127.0.0.1:{port}/callback"],
            grant_types=["authorization_code", "refresh_token"], token_endpoint_auth_method="client_secret_basic",
            scope=scope)
    if args.cimd:  # the document at that URL, as the server would have fetched it: any loopback redirect
        provider.clients[args.cimd] = LoopbackClient(client_id=args.cimd, redirect_uris=None,
                                                     token_endpoint_auth_method="none", scope=scope)
    cc = dict([_pair(args.cc_client, 2)]) if args.cc_client else {}
    jwt_keys = {}
    if args.jwt_client:
        client_id, pem = _pair(args.jwt_client, 2)
        jwt_keys[client_id] = Path(pem).read_text()
    app = build(base, issuer, provider, not args.no_registration, args.step_up).streamable_http_app()
    arranged = Arranged(app, layout, provider, issuer, cc=cc, jwt_keys=jwt_keys, cimd=bool(args.cimd),
                        step_up=(WRITE, "write_note") if args.step_up else None)
    uvicorn.Server(uvicorn.Config(arranged, host="127.0.0.1", port=args.port, log_level="warning",
                                  lifespan="on")).run()


if __name__ == "__main__":
    main()
