"""Where the OAuth test server's metadata and endpoints are (tests/support/oauth_mcp_server.py): an
ASGI layer over the SDK's app that moves them to each place the MCP authorization spec has a
client look, and adds what the SDK's authorization server lacks (the client credentials grant,
Client ID Metadata Documents, a tool that needs a wider scope).

The SDK serves protected resource metadata at the path-inserted well-known URL and names it in
every 401's `WWW-Authenticate`, its authorization server metadata at the root
`oauth-authorization-server` URL, and its endpoints at `/authorize`, `/token`, `/register`. A
layout says which of those a client finds: the rest answer 404, and the challenge loses its
`resource_metadata` unless the layout keeps it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote

from mcp.shared.auth import OAuthClientInformationFull

PRM_PATH = "/.well-known/oauth-protected-resource/mcp"  # where the SDK serves it
PRM_ROOT = "/.well-known/oauth-protected-resource"
ASM_OAUTH = "/.well-known/oauth-authorization-server"
ASM_OPENID = "/.well-known/openid-configuration"
ENDPOINTS = ("/authorize", "/token", "/register", "/revoke")
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass(frozen=True)
class Layout:
    header: bool = False  # the 401 names its metadata (resource_metadata)
    prm: str | None = PRM_PATH  # where protected resource metadata is served (None: nowhere, 2025-03-26)
    asm: str | None = ASM_OAUTH  # where authorization server metadata is served (None: nowhere)
    issuer_path: str = ""  # the authorization server's path: its endpoints are under it


LAYOUTS = {
    "header": Layout(header=True),
    "prm-path": Layout(),
    "prm-root": Layout(prm=PRM_ROOT),
    "asm-openid-root": Layout(asm=ASM_OPENID),
    "asm-oauth-path": Layout(asm=ASM_OAUTH + "/auth", issuer_path="/auth"),
    "asm-openid-path": Layout(asm=ASM_OPENID + "/auth", issuer_path="/auth"),
    "legacy-metadata": Layout(prm=None),  # 2025-03-26: the server's own root metadata
    "legacy-defaults": Layout(prm=None, asm=None),  # 2025-03-26: no metadata, the default endpoints
}


class LoopbackClient(OAuthClientInformationFull):
    """A client whose redirect may be any loopback port (RFC 8252 §7.3), as a Client ID Metadata
    Document naming `http://127.0.0.1/callback` allows."""

    def validate_redirect_uri(self, redirect_uri: Any) -> Any:
        if redirect_uri is not None and str(redirect_uri).startswith("http://127.0.0.1:") \
                and str(redirect_uri).endswith("/callback"):
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


async def _read_body(receive: Any) -> bytes:
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replaying(body: bytes, receive: Any) -> Any:
    """`receive` with the body read already handed out again first (then the client's own stream:
    a streamed answer listens on it for the client going away)."""
    given = False

    async def again() -> Any:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


async def _answer(send: Any, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] = ()) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": data})


class Arranged:
    """The SDK's app with its OAuth metadata and endpoints where `layout` puts them."""

    def __init__(self, app: Any, layout: Layout, provider: Any, issuer: str, *, cc: dict[str, str],
                 jwt_keys: dict[str, str], cimd: bool, step_up: tuple[str, str] | None) -> None:
        self.app, self.layout, self.provider, self.issuer = app, layout, provider, issuer
        self.cc, self.jwt_keys, self.cimd, self.step_up = cc, jwt_keys, cimd, step_up

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if path.startswith("/.well-known/") or "/.well-known/" in path:
            return await self._well_known(scope, receive, send, path)
        if path.startswith("/mcp"):
            return await self._mcp(scope, receive, send)
        prefix = self.layout.issuer_path
        inner = path[len(prefix):] if prefix and path.startswith(prefix + "/") else (None if prefix else path)
        if inner not in ENDPOINTS:
            return await _answer(send, 404, {"error": "not_found"})
        if inner == "/token" and scope["method"] == "POST":
            body = await _read_body(receive)
            form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
            if form.get("grant_type") == "client_credentials":
                return await self._client_credentials(scope, form, send)
            receive = _replaying(body, receive)
        await self.app({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)

    async def _well_known(self, scope: Any, receive: Any, send: Any, path: str) -> None:
        status = 404
        if path == self.layout.prm:
            status = 200
            await self.app({**scope, "path": PRM_PATH, "raw_path": PRM_PATH.encode()}, receive, send)
        elif path == self.layout.asm:
            status = 200
            await _answer(send, 200, self._metadata())
        else:
            await _answer(send, 404, {"error": "not_found"})
        self.provider.note(f"get {path} {status}")

    def _metadata(self) -> dict[str, Any]:
        """The authorization server's metadata as the SDK builds it, and what this server adds."""
        from mcp.server.auth.routes import build_metadata
        from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions

        registration = any(getattr(r, "path", "") == "/register" for r in getattr(self.app, "routes", []))
        metadata = build_metadata(self.issuer, None, ClientRegistrationOptions(enabled=registration,
                                                                               valid_scopes=self.provider.scopes),
                                  RevocationOptions()).model_dump(mode="json", exclude_none=True)
        if self.cimd:
            metadata["client_id_metadata_document_supported"] = True
        if self.cc or self.jwt_keys:
            metadata["grant_types_supported"].append("client_credentials")
            metadata["token_endpoint_auth_methods_supported"].append("private_key_jwt")
        return metadata

    async def _mcp(self, scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        bearer = headers.get(b"authorization", b"").decode("latin-1")
        token = bearer[7:].strip() if bearer.lower().startswith("bearer ") else ""
        if token:
            self.provider.note(f"bearer {token}")
        if self.step_up is not None and scope["method"] == "POST":
            body = await _read_body(receive)
            if self._needs_wider(body, token):
                wider, _tool = self.step_up
                challenge = (f'Bearer error="insufficient_scope", scope="{" ".join(self.provider.scopes)}", '
                             f'error_description="{_tool} needs {wider}"')
                return await _answer(send, 403, {"error": "insufficient_scope"},
                                     [(b"www-authenticate", challenge.encode())])
            receive = _replaying(body, receive)
        await self.app(scope, receive, self._without_metadata_url(send))

    def _needs_wider(self, body: bytes, token: str) -> bool:
        """A call of the step-up tool with a token that lacks the wider scope."""
        assert self.step_up is not None
        wider, tool = self.step_up
        try:
            message = json.loads(body)
        except ValueError:
            return False
        calls = isinstance(message, dict) and message.get("method") == "tools/call" \
            and (message.get("params") or {}).get("name") == tool
        granted = self.provider.access.get(token)
        return bool(calls) and granted is not None and wider not in granted.scopes

    def _without_metadata_url(self, send: Any) -> Any:
        """`send` with the challenge's resource_metadata taken out, unless the layout keeps it."""
        if self.layout.header:
            return send

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [
                    (k, b", ".join(p for p in v.split(b", ") if not p.startswith(b"resource_metadata="))
                     if k.lower() == b"www-authenticate" else v) for k, v in message["headers"]]}
            await send(message)

        return sending

    async def _client_credentials(self, scope: Any, form: dict[str, str], send: Any) -> None:
        """The client credentials grant (the SDK's authorization server has none): a secret in
        Basic auth or the form, or a JWT assertion signed with the client's key (RFC 7523)."""
        client = self._authenticated(scope, form)
        if client is None:
            return await _answer(send, 401, {"error": "invalid_client"})
        scopes = form.get("scope", "").split()
        token = self.provider.issue(client, scopes, form.get("resource"), "client_credentials", refreshable=False)
        await _answer(send, 200, token.model_dump(mode="json", exclude_none=True))

    def _authenticated(self, scope: Any, form: dict[str, str]) -> str | None:
        basic = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        if basic.startswith("Basic "):
            client, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
            client, secret = unquote(client), unquote(secret)
        else:
            client, secret = form.get("client_id", ""), form.get("client_secret", "")
        if client in self.cc and secret and self.cc[client] == secret:
            return client
        if form.get("client_assertion_type") == JWT_BEARER and form.get("client_assertion"):
            import jwt

            try:
                claims = jwt.decode(form["client_assertion"], options={"verify_signature": False})
                key = self.jwt_keys[claims["iss"]]
                checked = jwt.decode(form["client_assertion"], key, algorithms=["RS256", "ES256"],
                                     audience=[self.issuer, self.issuer + "/"])
            except (jwt.PyJWTError, KeyError):
                return None
            return str(checked["sub"]) if checked.get("sub") == checked.get("iss") else None
        return None
