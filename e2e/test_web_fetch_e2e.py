"""web_fetch end to end: the real `tmg` fetches a page from a local HTTP server. Allowed by a rule,
the page reaches the model as text without tags or scripts; without one a one-shot refuses it
(naming the loopback address and the rule), and the REPL asks."""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from e2e.conftest import API_KEY
from e2e.mock_llm import Text, ToolCall
from e2e.tmux import Terminal, tmux_available

PAGE = b"""<!doctype html><html><head><title>Kestrel manual</title>
<script>window.tracker = "SCRIPT-MARKER"; fetch("/beacon")</script><style>.x{color:red}</style></head>
<body><nav><a href="/">Home</a></nav><main><h1>Kestrel</h1>
<p>Kestrel reads its settings from <code>kestrel.toml</code> in the working folder, then from the
environment, so a variable always wins over the file. Restart it after a change.</p>
<ul><li>port: where it listens</li><li>workers: how many requests at once</li></ul></main>
<script>document.write("SCRIPT-MARKER-2")</script></body></html>"""


class Page:
    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        seen = self.headers

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                seen.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Set-Cookie", "sid=1")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/manual.html"
        self.rule = f"web_fetch(127.0.0.1:{self.server.server_address[1]}/**)"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


@pytest.fixture
def page():
    p = Page()
    yield p
    p.server.shutdown()
    p.server.server_close()


def test_an_allowed_page_reaches_the_model_as_text(tmg, llm, page):
    tmg.write_config(f"PERMISSIONS:\n  ALLOW: [\"{page.rule}\"]\n")
    llm.enqueue(ToolCall("web_fetch", {"url": page.url}), Text("Kestrel reads kestrel.toml."))
    r = tmg.run("-r", "read the kestrel manual")
    assert r.code == 0 and r.out == "Kestrel reads kestrel.toml.\n", r.err
    result = llm.requests[1]["messages"][-1]
    assert result["role"] == "tool"
    text = result["content"]
    assert text.startswith(f"URL: {page.url}\nTitle: Kestrel manual\n")
    assert "Kestrel reads its settings from `kestrel.toml` in the working folder" in text
    assert "- port: where it listens" in text
    assert not re.search(r"</?[a-z]+[ >]", text) and "SCRIPT-MARKER" not in text and "color:red" not in text
    (sent,) = page.headers
    assert sent["user-agent"].startswith("tmg/") and "cookie" not in sent and "authorization" not in sent
    assert API_KEY not in str(sent)


def test_without_a_rule_a_one_shot_refuses_the_loopback_address(tmg, llm, page):
    llm.enqueue(ToolCall("web_fetch", {"url": page.url}), Text("I could not read it."))
    r = tmg.run("-r", "--permissions", "yolo", "read the kestrel manual")
    assert r.code == 0, r.err
    assert page.headers == []  # nothing was fetched
    refusal = llm.requests[1]["messages"][-1]["content"]
    assert refusal.startswith("refused:") and "127.0.0.1 is a loopback address" in refusal
    assert f"refused web_fetch {page.url}" in r.err and page.rule in r.err


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_repl_asks_before_fetching_and_yes_fetches(tmg, llm, page):
    term = Terminal(width=120, height=40)
    try:
        llm.enqueue(ToolCall("web_fetch", {"url": page.url}), Text("The manual says: kestrel.toml."))
        term.start_tmg(tmg, prompt=r"^default · openai/mock-model")
        term.ask("read the kestrel manual")
        screen = term.wait_for(r"allow\? \[y/a/n/m\]")
        assert "tmg asks: web_fetch wants to fetch (127.0.0.1 is a loopback address: fetching it asks first)" in screen
        assert f"GET {page.url}" in screen and f"[a] yes always: {page.rule}" in screen
        assert page.headers == []
        term.ask("y")
        term.wait_for("The manual says: kestrel.toml.")
        assert len(page.headers) == 1
        assert "Kestrel reads its settings" in llm.requests[1]["messages"][-1]["content"]
        term.ask("/exit")
        assert term.exit_status() == 0
    finally:
        term.close()
