"""A URL server's refusals as one line (tmg.mcp.http_auth): what the line blames depends on what
tmg sent (issue 24 item 6), and a login after the start holds a call, not a finished start clock
(item 2)."""

from __future__ import annotations

import asyncio

from tmg.mcp import ServerSpec
from tmg.mcp.connection import McpConnection


def refused(status: int, headers: dict[str, str] | None = None, oauth: bool = False) -> str:
    conn = McpConnection(ServerSpec("web", url="https://mcp.example.com/mcp", headers=headers or {}))
    conn._http_refusal, conn._oauth = status, oauth
    return conn._refusal_line()


def test_a_403_blames_headers_only_when_headers_were_sent():
    assert "the credentials in MCP_SERVERS.web.HEADERS are not allowed in" in \
        refused(403, {"Authorization": "Bearer tok-123456789"})
    assert "HEADERS" not in refused(403) and "tmg sent no credentials" in refused(403)
    oauth = refused(403, oauth=True)
    assert "HEADERS" not in oauth and "its OAuth login does not allow this" in oauth and "tmg mcp login web" in oauth


async def test_a_login_after_the_start_holds_calls_and_moves_no_clock():
    conn = McpConnection(ServerSpec("web", url="https://mcp.example.com/mcp"))
    async with asyncio.timeout(30) as clock:
        conn._start_clock = clock
        conn._waiting_on_person(True)
        assert clock.when() is None and conn._asking  # the start waits for the person
        conn._waiting_on_person(False)
        assert clock.when() is not None and not conn._asking
    conn._start_clock = None  # the start is done (McpConnection._own clears it)
    conn._waiting_on_person(True)  # a step-up mid-session: this raised RuntimeError before
    assert conn._asking
    conn._waiting_on_person(False)
    assert not conn._asking and conn._answered_at > 0
