"""The OAuth pieces tmg owns around the SDK's provider: the login store, the loopback listener,
tokens masked once known (tmg.mcp.oauth). The whole flow is e2e/test_mcp_oauth.py."""

from __future__ import annotations

import asyncio
import os
import stat

import pytest

from tmg.redaction import process_redactor
from tmg.mcp.oauth import LoopbackRedirect, OAuthStore, _free_port, _Storage

URL = "https://mcp.example.com/mcp"


def test_the_store_is_private_and_keyed_by_url(tmp_path):
    store = OAuthStore(tmp_path / "tmg" / "mcp-oauth.json")
    store.update(URL, tokens={"access_token": "at-1"})
    store.update("https://other.example.com/mcp", tokens={"access_token": "at-2"})
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert store.has_login(URL) and store.entry(URL)["tokens"]["access_token"] == "at-1"
    assert store.forget(URL) and not store.has_login(URL)
    assert store.has_login("https://other.example.com/mcp")
    assert not store.forget(URL)


def test_a_damaged_store_holds_no_login(tmp_path):
    store = OAuthStore(tmp_path / "mcp-oauth.json")
    store.path.write_text("{not json")
    assert not store.has_login(URL)
    store.update(URL, tokens={"access_token": "at-1"})  # a login writes it afresh
    assert store.has_login(URL)


async def test_stored_tokens_are_masked_once_stored_or_read(tmp_path):
    from mcp.shared.auth import OAuthToken

    storage = _Storage(OAuthStore(tmp_path / "mcp-oauth.json"), URL)
    await storage.set_tokens(OAuthToken(access_token="at-5e1f0c2d9a8b7c6d", refresh_token="rt-0a9b8c7d6e5f4a3b",
                                        expires_in=60))
    assert process_redactor()("Bearer at-5e1f0c2d9a8b7c6d and rt-0a9b8c7d6e5f4a3b") == "Bearer *** and ***"
    assert storage.expires_at() is not None
    assert (await storage.get_tokens()).access_token == "at-5e1f0c2d9a8b7c6d"


async def _get(port: int, path: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


async def test_the_loopback_takes_the_code_and_state_and_ignores_other_paths():
    loopback = LoopbackRedirect(_free_port(), "web")
    await loopback.listen()
    assert (await _get(loopback.port, "/favicon.ico")).startswith(b"HTTP/1.1 404")
    page = await _get(loopback.port, "/callback?code=c0de&state=st4te")
    assert b"logged in to web" in page
    assert await loopback.wait(5) == ("c0de", "st4te", None)


async def test_a_refused_login_is_an_error_saying_why():
    from mcp.client.auth import OAuthFlowError

    loopback = LoopbackRedirect(_free_port(), "web")
    await loopback.listen()
    page = await _get(loopback.port, "/callback?error=access_denied&error_description=no+thanks&state=s")
    assert b"refused" in page
    with pytest.raises(OAuthFlowError, match=r"refused the login \(access_denied no thanks\)"):
        await loopback.wait(5)
