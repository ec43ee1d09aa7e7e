"""Does a URL server that answered 401 without naming its metadata offer OAuth?

The MCP authorization spec has a server name its protected resource metadata in the 401's
`WWW-Authenticate` (`resource_metadata`, RFC 9728), and has a client that finds none there try
the well-known URLs: `/.well-known/oauth-protected-resource` with the server's path inserted,
then at the root; a server of the 2025-03-26 revision publishes no such document, and has its
authorization server metadata at its own root (`/.well-known/oauth-authorization-server`), or
failing that the default endpoints (`/authorize`, `/token`, `/register`). The SDK's provider
walks the same list when it logs in (tmg.mcp.oauth_provider); this only asks, before anyone is
sent to a login, whether there is one: a server whose 401 leads nowhere wants a static token in
HEADERS, and is told so.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit

PROBE_WAIT_S = 5.0  # the most the well-known URLs are given, all together
# What an authorization endpoint answers a GET without parameters: the SDK's says 400 (no
# client_id); others redirect to a login page or show one. A plain 401/403/404 is no endpoint.
_AUTHORIZE_ANSWERS = (200, 302, 303, 307, 400)


async def offers_oauth(url: str, bound: float = PROBE_WAIT_S) -> bool:
    """True when the server's well-known URLs (or a 2025-03-26 server's default endpoint) show
    an OAuth authorization server; False when none does or none answers within `bound` seconds."""
    try:
        async with asyncio.timeout(bound):
            return await _probe(url)
    except Exception:  # noqa: BLE001 - no answer in time, a refused connection: no OAuth found there
        return False


async def _probe(url: str) -> bool:
    from mcp.client.auth.utils import build_protected_resource_metadata_discovery_urls
    from mcp.shared._httpx_utils import create_mcp_http_client

    parts = urlsplit(url)
    root = f"{parts.scheme}://{parts.netloc}"
    async with create_mcp_http_client() as client:
        for candidate in build_protected_resource_metadata_discovery_urls(None, url):
            if _lists(await _get_json(client, candidate), "authorization_servers"):
                return True
        # A 2025-03-26 server: its own root metadata, then its default authorization endpoint.
        if _lists(await _get_json(client, f"{root}/.well-known/oauth-authorization-server"), "response_types_supported"):
            return True
        answer = await client.get(f"{root}/authorize")
        return answer.status_code in _AUTHORIZE_ANSWERS


async def _get_json(client: Any, url: str) -> Any:
    """The JSON document at `url`, or None (not there, not JSON)."""
    answer = await client.get(url)
    if answer.status_code != 200:
        return None
    try:
        return json.loads(answer.content)
    except ValueError:
        return None


def _lists(document: Any, key: str) -> bool:
    return isinstance(document, dict) and isinstance(document.get(key), list) and bool(document[key])
