"""web_fetch: a web page (HTTP(S) GET) as Markdown, for "read these docs and ...".

Network access under the permission engine (effect `network`: asks by default; a rule such as
`web_fetch(docs.python.org/**)` allows it); a URL naming a loopback or private address needs a
rule naming it or the user's answer (`ToolAction.private`), and a host that only resolves to one
is refused unless a rule names the URL (tmg.tools.web_client). A page is fetched once per
CACHE_TTL_S: reading on (``start``) and asking again use the copy. What comes back is a tool
result like any other: it is never learned from (memory learns only from what the user typed).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlsplit

from tmg.permissions.action import ToolAction
from tmg.permissions.rules import url_target
from tmg.tools.registry import ToolResult

CACHE_TTL_S = 15 * 60
CACHE_PAGES = 32
PAGE_CHARS = 12_000  # text returned per call (under the registry's cap): `start` reads on
FETCH_TIMEOUT_S = 20.0  # the whole fetch, redirects included (under TOOL_TIMEOUT's default)


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str
    notes: tuple[str, ...] = ()


def normalise(raw: str) -> str:
    """The URL the model meant: a bare `docs.python.org/x` is https."""
    raw = raw.strip()
    return raw if "://" in raw else f"https://{raw}"


class WebFetchTool:
    name = "web_fetch"
    description = ("Fetch a web page (http or https) and read it as Markdown: the page's main text, headings, "
                   "lists, code and links, without its scripts or menus. Long pages come in parts: pass start "
                   "to read on. Fetching asks the user unless their rules allow the site.")
    parameters = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The page's URL (https:// is assumed when no scheme is given)"},
            "start": {"type": "integer", "description": "Character to start from, to read on in a long page; "
                                                        "default 0"},
        },
        "required": ["url"],
    }

    def __init__(self, *, names_url: Callable[[str], bool], allows: Callable[[ToolAction], bool],
                 clock: Callable[[], float] = time.monotonic, resolver: Any = None) -> None:
        """``names_url(url)``: a rule names that URL (what a private address needs); ``allows(action)``:
        the permission engine allows it without asking (a redirect to another host is followed then);
        ``resolver``: a host's addresses (None: the system's DNS)."""
        self._names_url = names_url
        self._allows = allows
        self._clock = clock
        self._resolver = resolver
        self._cache: OrderedDict[str, tuple[float, Page]] = OrderedDict()

    def time_limit(self, _arguments: dict[str, Any]) -> float:
        return FETCH_TIMEOUT_S + 5.0  # conversion of a big page comes after the fetch

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        from tmg.tools.web_client import special_address

        url = normalise(str(arguments.get("url", "")))
        if url_target(url) is None:
            return ToolAction(self.name, "network", url=url, refusal=f"{url!r} is not an http or https URL")
        host = urlsplit(url).hostname or ""
        return ToolAction(self.name, "network", url=url, preview=f"GET {url}", private=special_address(host))

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        url = normalise(str(arguments.get("url", "")))
        try:
            start = max(0, int(arguments.get("start") or 0))
        except (TypeError, ValueError):
            return ToolResult("error: start must be a whole number", is_error=True)
        page = self._cached(url)
        if page is None:
            result = await self._fetch(url)
            if isinstance(result, ToolResult):
                return result
            page = result
            self._keep(url, page)
        return ToolResult(_shown(page, start))

    async def _fetch(self, url: str) -> Page | ToolResult:
        from tmg.tools import web_client
        from tmg.tools.web_markdown import is_html, is_text, page_text

        # The gate let this URL through though it names a private address (a rule or the user's
        # answer named it): its own site may be reached, redirects within it too.
        allowed_private = self.action({"url": url}).private is not None

        def may_reach(hop: str) -> bool:
            return (allowed_private and _origin(hop) == _origin(url)) or self._names_url(hop)

        def may_follow(hop: str) -> bool:
            action = self.action({"url": hop})
            return action.refusal is None and self._allows(action)

        try:
            got = await web_client.get(url, may_reach=may_reach, may_follow=may_follow, timeout=FETCH_TIMEOUT_S,
                                       resolver=self._resolver or web_client.resolve)
        except web_client.FetchError as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        if got.redirect is not None:
            return ToolResult(f"{url} redirects to {got.redirect}, another site that your permission for this fetch "
                              "does not cover: call web_fetch with that URL to follow it (the user may be asked)")
        if got.status >= 400:
            return ToolResult(f"error: HTTP {got.status} from {got.url}", is_error=True)
        if got.body and not (is_html(got.content_type) or is_text(got.content_type) or not got.content_type):
            return ToolResult(f"error: {got.url} is {got.content_type} ({len(got.body):,} bytes), not text; "
                              "web_fetch reads web pages and text", is_error=True)
        title, text = await asyncio.to_thread(page_text, got.body, got.content_type, got.charset, got.url)
        notes = (f"the page was cut at {web_client.MAX_BYTES:,} bytes",) if got.cut else ()
        return Page(got.url, title, text, notes)

    def _cached(self, url: str) -> Page | None:
        kept = self._cache.get(url)
        if kept is None or self._clock() - kept[0] > CACHE_TTL_S:
            self._cache.pop(url, None)
            return None
        return kept[1]

    def _keep(self, url: str, page: Page) -> None:
        self._cache[url] = (self._clock(), page)
        while len(self._cache) > CACHE_PAGES:
            self._cache.popitem(last=False)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port


def _shown(page: Page, start: int) -> str:
    head = [f"URL: {page.url}"] + ([f"Title: {page.title}"] if page.title else [])
    text = page.text
    if not text.strip():
        return "\n".join(head + ["(the page has no text)"])
    if start >= len(text):
        return "\n".join(head + [f"(start {start} is past the end: the page has {len(text):,} characters)"])
    part = text[start:start + PAGE_CHARS]
    end = start + len(part)
    tail = list(page.notes)
    if start or end < len(text):
        more = f"; read on with start={end}" if end < len(text) else ""
        tail.append(f"characters {start:,}-{end:,} of {len(text):,}{more}")
    return "\n".join(head) + "\n\n" + part + ("\n\n[" + "; ".join(tail) + "]" if tail else "")
