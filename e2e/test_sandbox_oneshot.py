"""The shell tool's OS sandbox through the real one-shot: an allowed command writes the working
folder and nothing else, reaches no server, and the model is told (the mock's request log shows
it); running a command outside the sandbox is never a one-shot's to allow."""

from __future__ import annotations

import http.server
import sys
import threading

import pytest

from e2e.mock_llm import Text, ToolCall
from tests.support.sandbox import require_bubblewrap

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


@pytest.fixture(autouse=True)
def _bubblewrap():
    require_bubblewrap()


def result_of(llm, request: int = 1) -> str:
    last = llm.requests[request]["messages"][-1]
    assert last["role"] == "tool", last
    return last["content"]


def sandboxed(tmg) -> None:
    """Every command allowed (yolo), so what stops one is the sandbox alone."""
    tmg.write_config("PERMISSIONS:\n  MODE: yolo\nSANDBOX:\n  MODE: on\n")


def test_an_allowed_command_writes_inside_the_folder_and_not_outside_it(tmg, llm):
    sandboxed(tmg)
    home = tmg.root / "user-home"
    home.mkdir()
    llm.enqueue(ToolCall("shell", {"command": "echo kept > inside.txt"}),
                ToolCall("shell", {"command": f"echo lost > {home}/outside.txt"}), Text("done"))
    r = tmg.run("write two files")
    assert r.code == 0, r.err
    assert (tmg.work / "inside.txt").read_text() == "kept\n"
    assert result_of(llm, 1) == "exit code: 0\n(no output)"
    assert not (home / "outside.txt").exists()
    told = result_of(llm, 2)
    assert "Read-only file system" in told and "[sandbox]" in told and f"{home}/outside.txt" in told
    assert "\"unsandboxed\": true" in told


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"reached the host")

    def log_message(self, *_args):
        pass


def test_a_sandboxed_command_reaches_no_server_not_even_on_localhost(tmg, llm):
    sandboxed(tmg)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    fetch = f"{sys.executable} -c \"import urllib.request; print(urllib.request.urlopen('{url}').read())\""
    try:
        llm.enqueue(ToolCall("shell", {"command": fetch}), Text("no luck"))
        r = tmg.run("fetch it")
    finally:
        httpd.shutdown()
    assert r.code == 0, r.err
    told = result_of(llm)
    assert "reached the host" not in told and "Connection refused" in told
    assert "it has no network" in told and "SANDBOX.NETWORK: true" in told


def test_a_one_shot_refuses_a_command_outside_the_sandbox_even_in_yolo(tmg, llm):
    sandboxed(tmg)
    llm.enqueue(ToolCall("shell", {"command": "touch x", "unsandboxed": True}), Text("refused"))
    r = tmg.run("make x")
    assert not (tmg.work / "x").exists()
    assert result_of(llm).startswith("refused:") and "OUTSIDE the OS sandbox" in result_of(llm)
    (line,) = [line for line in r.err.splitlines() if "outside the sandbox" in line]
    assert line.startswith("tmg: refused shell `touch x`") and "SANDBOX.WRITABLE" in line
