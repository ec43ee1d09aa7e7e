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
AUTHORIZATION_URL = re.compile(r"(http://127\.0\.0\.1:\d+(?:/auth)?/authorize\?\S+)")


class OAuthMcpServer(HttpMcpServer):
    """The server and its authorization server on one port; `log` says what it issued and saw."""

    what = "the OAuth MCP test server"

    def __init__(self, log: Path, port: int | None = None, *options: str) -> None:
        super().__init__(port)
        self.log = log
        self.options = list(options)  # oauth_mcp_server.py's: --layout, --no-registration, --client ...

    def argv(self) -> list[str]:
        return [sys.executable, str(SCRIPT), str(self.port), "--log", str(self.log), *self.options]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lines(self, kind: str) -> list[str]:
        """What follows `kind` on each of its log lines: the tokens issued (`code`, `refresh`,
        `client_credentials`) or seen (`bearer`), clients registered (`register`) or authorized
        (`authorize`: client and scopes), well-known URLs asked for (`get`: path and status)."""
        text = self.log.read_text() if self.log.exists() else ""
        return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(kind + " ")]


def approve(authorization_url: str) -> str:
    """What a browser does once the user approved: GET the URL, follow the redirect to the
    client's loopback listener; returns the page the listener answered."""
    with urllib.request.urlopen(authorization_url, timeout=30) as page:
        return page.read().decode()
