"""web_fetch against a real HTTP server on 127.0.0.1: what the model reads, what is sent, what is
refused (private addresses, redirects elsewhere), the bounds and the cache.

A host name other than an IP literal is resolved by the tool; here a resolver maps the test's
names to 127.0.0.1 (no DNS on this machine), which is also how a name that turns out to be private
(the rebinding case) is made."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tmg.tools import web_client
from tmg.tools.web_fetch import CACHE_TTL_S, PAGE_CHARS, WebFetchTool

PAGE = b"""<!doctype html><html><head><title>Widget docs</title>
<style>body{color:red}</style><script>var leak = "SCRIPT-TEXT"; document.cookie = "x";</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><article><h1>Widgets</h1><p>A widget is configured with <code>widget.toml</code>; see the
<a href="/guide/setup.html">setup guide</a> for the long story of how widgets came to be.</p>
<h2>Options</h2><ul><li><strong>size</strong>: how big the widget is, in units</li>
<li><strong>colour</strong>: what colour it has, by name</li></ul>
<pre><code>widget --size 3 --colour blue</code></pre>
<p>Every widget has a size and a colour, and nothing else: that is the whole design.</p></article></main>
<footer>Copyright Widget Corp</footer><script>alert("SCRIPT-2")</script></body></html>"""


class Site:
    """A little site: pages by path; every request's headers kept."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.requests: list[dict[str, str]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the stdlib's name
                site.requests.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                status, headers, body = site.routes.get(self.path, (404, {}, b"not here"))
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def page(self, path: str, body: bytes, media: str = "text/html; charset=utf-8", **headers: str) -> None:
        self.routes[path] = (200, {"Content-Type": media, **headers}, body)

    def redirect(self, path: str, to: str) -> None:
        self.routes[path] = (302, {"Location": to}, b"")


@pytest.fixture
def site():
    s = Site()
    yield s
    s.server.shutdown()
    s.server.server_close()


async def to_loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


def tool(names=(), allows=False, clock=None, resolver=to_loopback) -> WebFetchTool:
    kw = {"clock": clock} if clock else {}
    return WebFetchTool(names_url=lambda url: any(url.startswith(n) for n in names), allows=lambda _a: allows,
                        resolver=resolver, **kw)


async def test_a_page_reaches_the_model_as_markdown_without_tags_or_scripts(site):
    site.page("/docs", PAGE)
    result = await tool().run({"url": site.url("/docs")})
    assert not result.is_error, result.content
    text = result.content
    assert text.startswith(f"URL: {site.url('/docs')}\nTitle: Widget docs\n")
    assert "# Widgets" in text and "- **size**: how big the widget is" in text
    assert "```\nwidget --size 3 --colour blue\n```" in text
    assert f"[setup guide]({site.url('/guide/setup.html')})" in text  # links made absolute
    assert "<" not in text and "SCRIPT" not in text and "color:red" not in text and "Copyright" not in text


async def test_nothing_of_the_users_is_sent(site, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://user:secret@127.0.0.1:9")  # trusted, every fetch would fail
    site.routes["/a"] = (302, {"Location": "/b", "Set-Cookie": "session=abc; Path=/"}, b"")
    site.page("/b", b"<p>done, and a little more text so it counts as content of the page for sure.</p>")
    result = await tool().run({"url": site.url("/a")})
    assert not result.is_error, result.content
    first, second = site.requests
    assert second["path"] == "/b" and "cookie" not in second  # the cookie the first hop set is not sent back
    for sent in (first, second):
        assert sent["user-agent"].startswith("tmg/") and "authorization" not in sent and "proxy-authorization" not in sent


async def test_the_request_goes_to_the_address_that_was_checked(site):
    site.page("/p", b"<p>" + b"served to the name " * 20 + b"</p>")
    result = await tool(names=("http://docs.example",)).run({"url": site.url("/p", host="docs.example")})
    assert not result.is_error, result.content
    assert site.requests[0]["host"] == f"docs.example:{site.port}"


async def test_a_name_that_resolves_to_a_private_address_needs_a_rule_naming_it(site):
    site.page("/p", b"<p>internal</p>")
    result = await tool().run({"url": site.url("/p", host="intranet.example")})
    assert result.is_error and "intranet.example resolves to 127.0.0.1, which" in result.content
    assert "loopback address" in result.content and f"web_fetch(intranet.example:{site.port}/**)" in result.content
    assert site.requests == []  # refused before any connection


async def test_a_redirect_to_a_private_address_is_refused(site):
    async def dns(host: str, port: int) -> list[str]:
        return {"public.example": ["127.0.0.1"], "internal.example": ["10.0.0.5"]}[host]

    site.redirect("/go", "http://internal.example/admin")
    # The first hop is allowed by name (it is this test's server); following to another host is
    # allowed too, but that host is a private address that no rule names.
    fetch = WebFetchTool(names_url=lambda url: url.startswith("http://public.example"), allows=lambda _a: True,
                         resolver=dns)
    result = await fetch.run({"url": site.url("/go", host="public.example")})
    assert result.is_error, result.content
    assert "refused: internal.example resolves to 10.0.0.5, which is a private address" in result.content
    assert [r["path"] for r in site.requests] == ["/go"]


async def test_a_redirect_to_another_site_goes_back_to_the_model_unless_allowed(site):
    site.redirect("/old", "https://elsewhere.example/new")
    result = await tool().run({"url": site.url("/old")})
    assert not result.is_error
    assert "redirects to https://elsewhere.example/new" in result.content and "call web_fetch with that URL" in result.content
    assert len(site.requests) == 1


async def test_redirects_are_bounded(site):
    for i in range(8):
        site.redirect(f"/r{i}", f"/r{i + 1}")
    result = await tool().run({"url": site.url("/r0")})
    assert result.is_error and "redirected more than 5 times" in result.content
    assert len(site.requests) == 6


async def test_a_long_page_comes_in_parts_and_a_huge_one_is_cut(site, monkeypatch):
    words = " ".join(f"word{i}" for i in range(6000))
    site.page("/long", words.encode(), media="text/plain")
    fetch = tool()
    first = await fetch.run({"url": site.url("/long")})
    assert f"characters 0-{PAGE_CHARS:,} of {len(words):,}; read on with start={PAGE_CHARS}" in first.content
    second = await fetch.run({"url": site.url("/long"), "start": PAGE_CHARS})
    assert words[PAGE_CHARS:PAGE_CHARS + 50] in second.content
    assert len(site.requests) == 1  # reading on uses the copy
    monkeypatch.setattr(web_client, "MAX_BYTES", 1000)
    cut = await tool().run({"url": site.url("/long")})
    assert "the page was cut at 1,000 bytes" in cut.content and "word999" not in cut.content


async def test_the_cache_holds_a_page_for_a_while(site):
    site.page("/c", b"<p>" + b"cached words for the model to read " * 10 + b"</p>")
    now = [1000.0]
    fetch = tool(clock=lambda: now[0])
    await fetch.run({"url": site.url("/c")})
    await fetch.run({"url": site.url("/c")})
    assert len(site.requests) == 1
    now[0] += CACHE_TTL_S + 1
    await fetch.run({"url": site.url("/c")})
    assert len(site.requests) == 2


async def test_what_is_not_text_or_not_there_is_an_error(site):
    site.page("/img", b"\x89PNG\r\n\x1a\n" + b"\0" * 100, media="image/png")
    image = await tool().run({"url": site.url("/img")})
    assert image.is_error and "is image/png (108 bytes), not text" in image.content
    missing = await tool().run({"url": site.url("/nope")})
    assert missing.is_error and "HTTP 404" in missing.content


def test_the_call_is_described_as_network_access_naming_private_addresses():
    fetch = tool()
    assert fetch.action({"url": "docs.python.org/3/"}).url == "https://docs.python.org/3/"
    public = fetch.action({"url": "https://docs.python.org/3/"})
    assert (public.effect, public.private, public.refusal) == ("network", None, None)
    assert fetch.action({"url": "http://127.0.0.1:8000/"}).private == "127.0.0.1 is a loopback address"
    assert fetch.action({"url": "http://[::1]/"}).private == "::1 is a loopback address"
    assert fetch.action({"url": "http://192.168.1.4/"}).private == "192.168.1.4 is a private address"
    assert fetch.action({"url": "http://localhost:3000/x"}).private == "localhost is a loopback address"
    assert fetch.action({"url": "ftp://files.example/x"}).refusal is not None
