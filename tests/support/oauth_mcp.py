"""Run the OAuth-protected test server (tests/support/oauth_mcp_server.py) in a subprocess, and
play the browser for a login: GET the authorization URL a client shows and follow the redirects
to the client's loopback listener."""

from __future__ import annotations

import re
import sys
import urllib.request
from pathlib import Path

from tests.support.http_mcp import HttpMcpServer

SCRIPT = Path(__file__).resolve().parent / "oauth_mcp_server.py"
AUTHORIZATION_URL = re.compile(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)")


class OAuthMcpServer(HttpMcpServer):
    """The server and its authorization server on one port; `log` says what it issued and saw."""

    what = "the OAuth MCP test server"

    def __init__(self, log: Path, port: int | None = None) -> None:
        super().__init__(port)
        self.log = log

    def argv(self) -> list[str]:
        return [sys.executable, str(SCRIPT), str(self.port), "--log", str(self.log)]

    def lines(self, kind: str) -> list[str]:
        """What follows `kind` on each of its log lines: the tokens issued (`code`, `refresh`) or seen (`bearer`)."""
        text = self.log.read_text() if self.log.exists() else ""
        return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(kind + " ")]


def approve(authorization_url: str) -> str:
    """What a browser does once the user approved: GET the URL, follow the redirect to the
    client's loopback listener; returns the page the listener answered."""
    with urllib.request.urlopen(authorization_url, timeout=30) as page:
        return page.read().decode()
