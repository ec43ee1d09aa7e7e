"""An answer's single line breaks are kept on the terminal, as in piped output; the rest of
Markdown renders as rich renders it (through a fixed-width capture console)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markdown import Markdown

from tmg.ui.chat_markdown import ChatMarkdown


def _lines(markdown: Markdown, width: int = 40) -> list[str]:
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False, color_system=None).print(markdown)
    return [line.rstrip() for line in buf.getvalue().strip("\n").splitlines()]


def test_single_line_breaks_stay_line_breaks():
    assert _lines(ChatMarkdown("first line\nsecond line\nthird line")) == ["first line", "second line", "third line"]
    assert _lines(Markdown("first line\nsecond line")) == ["first line second line"]  # what CommonMark does


def test_a_long_line_still_wraps_and_paragraphs_stay_apart():
    shown = _lines(ChatMarkdown("A paragraph that is long enough to wrap at forty columns.\nNext line.\n\nSecond."))
    assert shown == ["A paragraph that is long enough to wrap", "at forty columns.", "Next line.", "", "Second."]


def test_a_list_item_keeps_its_line_break_inside_the_item():
    shown = _lines(ChatMarkdown("- item one\n  continued\n- item two"))
    assert shown == [" • item one", "   continued", " • item two"]


def test_code_blocks_tables_headings_and_lists_render_as_before():
    text = ("## Heading\n\n- a\n- b\n\n1. one\n2. two\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n"
            "```python\ndef f():\n    return 1\n```\n\n> a quote")
    assert _lines(ChatMarkdown(text)) == _lines(Markdown(text))
