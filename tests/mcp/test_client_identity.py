"""What tmg tells a server about itself and how it answers a page to open (issue 24 item 6), over
stdio to a real SDK server (tests/support/asking_mcp_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tmg import __version__
from tmg.mcp import ServerSpec, child_environment
from tmg.mcp.connection import McpConnection

ASKING = Path(__file__).resolve().parents[1] / "support" / "asking_mcp_server.py"


def spec() -> ServerSpec:
    return ServerSpec("asking", command=sys.executable, args=(str(ASKING),), env=child_environment({}))


async def test_the_client_reports_tmgs_version():
    async with McpConnection(spec(), start_timeout=30) as conn:
        said = json.loads((await conn.call_tool("whoami", {}, timeout=10)).text)
    assert (said["name"], said["version"]) == ("tmg", __version__)
    assert {"form", "url"} <= set(said["capabilities"]["elicitation"])


async def test_a_page_to_open_is_put_to_the_user_and_a_one_not_http_is_declined_unasked():
    asked: list[tuple[str, str, str]] = []

    async def open_url(server: str, message: str, url: str) -> bool:
        asked.append((server, message, url))
        return True

    async with McpConnection(spec(), start_timeout=30) as conn:
        assert (await conn.call_tool("open_page", {"url": "https://pay.example.com/t/1"}, timeout=10)).text \
            == "page decline"  # nobody to ask
        conn.elicit_url = open_url
        assert (await conn.call_tool("open_page", {"url": "https://pay.example.com/t/1"}, timeout=10)).text \
            == "page accept"
        assert (await conn.call_tool("open_page", {"url": "javascript:alert(1)"}, timeout=10)).text == "page decline"
    assert asked == [("asking", "Pay for the table there.", "https://pay.example.com/t/1")]
