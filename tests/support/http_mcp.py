"""Run the echo test server over Streamable HTTP in a subprocess (tests/support/http_mcp_server.py),
on a port that stays the same across a kill and a restart."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Self

from tests.support.waiting import eventually

SCRIPT = Path(__file__).resolve().parent / "http_mcp_server.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


class HttpMcpServer:
    """`start()`, `kill()`, `start()` again: the same URL each time."""

    def __init__(self, port: int | None = None, token: str | None = None) -> None:
        self.port = port or free_port()
        self.token = token
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    what = "the HTTP MCP test server"  # as errors name it

    def argv(self) -> list[str]:
        return [sys.executable, str(SCRIPT), str(self.port)] + (["--token", self.token] if self.token else [])

    def start(self) -> Self:
        self.proc = subprocess.Popen(self.argv(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not eventually(lambda: _listening(self.port) or self.proc.poll() is not None, guard=30):
            raise RuntimeError(f"{self.what} did not listen within 30 s")
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.what} exited ({self.proc.returncode})")
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        eventually(lambda: not _listening(self.port))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()
