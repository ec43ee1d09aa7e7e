"""Run the OAuth-protected test server (tests/support/oauth_mcp_server.py) in a subprocess, and
play the browser for a login: GET the authorization URL a client shows and follow the redirects
to the client's loopback listener."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.support.http_mcp import _listening, free_port
from tests.support.waiting import eventually

SCRIPT = Path(__file__).resolve().parent / "oauth_mcp_server.py"
AUTHORIZATION_URL = re.compile(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)")


class OAuthMcpServer:
    """The server and its authorization server on one port; `log` says what it issued and saw."""

    def __init__(self, log: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def lines(self, kind: str) -> list[str]:
        """What follows `kind` on each of its log lines: the tokens issued (`code`, `refresh`) or seen (`bearer`)."""
        text = self.log.read_text() if self.log.exists() else ""
        return [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(kind + " ")]

    def start(self) -> OAuthMcpServer:
        self.proc = subprocess.Popen([sys.executable, str(SCRIPT), str(self.port), "--log", str(self.log)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not eventually(lambda: _listening(self.port) or self.proc.poll() is not None, guard=30):
            raise RuntimeError("the OAuth MCP test server did not listen within 30 s")
        if self.proc.poll() is not None:
            raise RuntimeError(f"the OAuth MCP test server exited ({self.proc.returncode})")
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        eventually(lambda: not _listening(self.port))

    def __enter__(self) -> OAuthMcpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()


def approve(authorization_url: str) -> str:
    """What a browser does once the user approved: GET the URL, follow the redirect to the
    client's loopback listener; returns the page the listener answered."""
    with urllib.request.urlopen(authorization_url, timeout=30) as page:
        return page.read().decode()
