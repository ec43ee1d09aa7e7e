"""A fetched page as text the model can read: HTML turned into Markdown, other text kept as it is.

HTML goes through readability-lxml (the page's main content: no navigation, banners, footers,
scripts or styles) and markdownify (headings, lists, code blocks, tables and links as Markdown).
Chosen on quality and import cost against html2text and trafilatura (docs/web-fetch.md): html2text
imports fastest but keeps every menu and banner; trafilatura dropped a docs page's code examples.
A page readability finds next to nothing in (an index, a list of links) is converted whole, less
its scripts and styles. Both libraries are imported only here, only when a page is fetched.
"""

from __future__ import annotations

import json
import re
from functools import cache
from urllib.parse import urljoin

MIN_ARTICLE_CHARS = 200  # a readability result shorter than this is not the page's content
_DROP = ("script", "style", "noscript", "template", "iframe", "svg", "canvas", "object", "embed", "head")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_HTML = ("text/html", "application/xhtml+xml")


def is_html(media: str) -> bool:
    return media in _HTML


def is_text(media: str) -> bool:
    return (media.startswith("text/") or media in ("application/json", "application/xml", "application/javascript")
            or media.endswith(("+json", "+xml")))


def decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def page_text(body: bytes, media: str, charset: str | None, url: str = "") -> tuple[str, str]:
    """``(title, text)`` of a text body: Markdown for HTML (links made absolute against ``url``),
    pretty JSON, other text as it is."""
    if is_html(media) or (not media and body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))):
        return html_to_markdown(decode(body, charset), url)
    text = decode(body, charset)
    if media == "application/json" or media.endswith("+json"):
        try:
            text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            pass
    return "", text


def html_to_markdown(html: str, url: str = "") -> tuple[str, str]:
    """``(title, markdown)`` of an HTML page."""
    if not html.strip():
        return "", ""
    import markdownify
    from readability import Document

    try:
        document = Document(html)
        title = (document.short_title() or "").strip()
        article = document.summary(html_partial=True)
    except Exception:  # noqa: BLE001 - readability gives up on odd pages: convert them whole
        title, article = "", ""
    text = _markdown(markdownify, article, url) if article else ""
    if len(text) < MIN_ARTICLE_CHARS:
        whole = _markdown(markdownify, html, url, whole=True)
        if len(whole) > len(text):
            text = whole
    return title, text


def _markdown(markdownify, html: str, url: str, whole: bool = False) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    for tag in soup(list(_DROP)):
        tag.decompose()  # the element and what is inside it: a script's code is no text
    if whole:
        for tag in soup(["nav", "footer", "aside", "form", "button"]):
            tag.decompose()
    text = _converter(markdownify)(heading_style="ATX", bullets="-", escape_misc=False, base_url=url).convert_soup(soup)
    return _BLANK_LINES.sub("\n\n", text).strip()


@cache
def _converter(markdownify):
    class Converter(markdownify.MarkdownConverter):
        """Links made absolute (the model can fetch them as they are), without their title
        attribute (rustdoc's "struct std::string::String" on every link)."""

        def convert_a(self, el, text, parent_tags):
            el.attrs.pop("title", None)
            base, href = self.options.get("base_url"), el.get("href")
            if base and href and not href.startswith("#"):
                el["href"] = urljoin(base, href)
            return super().convert_a(el, text, parent_tags)

    return Converter
