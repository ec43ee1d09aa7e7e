"""The answer sinks keep the last of the answer back until the turn is stored (issue 9, defect 4)."""

from __future__ import annotations

import io

from rich.console import Console

from tmg.ui.answer import PlainAnswer
from tmg.ui.held_tail import HeldTail
from tmg.ui.markdown_stream import MarkdownStream


def test_plain_answer_shows_all_but_the_last_character_until_finish():
    out = io.StringIO()
    answer = PlainAnswer(out)
    for piece in ("The answer ", "is 42", "."):
        answer.feed(piece)
    assert out.getvalue() == "The answer is 42"  # not the whole answer: it is not stored yet
    answer.finish()
    assert out.getvalue() == "The answer is 42.\n"


def test_plain_answer_keeps_a_trailing_newline_once_and_whitespace_with_the_tail():
    out = io.StringIO()
    answer = PlainAnswer(out)
    answer.feed("line one\nline two\n")
    answer.feed("\n")
    assert out.getvalue() == "line one\nline tw"
    answer.finish()
    assert out.getvalue() == "line one\nline two\n\n"


def test_held_tail_holds_only_a_few_characters():
    tail = HeldTail()
    assert tail.take("a") == ""
    assert tail.take("bc  ") == "ab"
    assert tail.held == "c  "
    assert tail.take("d") == "c  "
    assert tail.release() == "d" and tail.held == ""


def test_markdown_stream_prints_the_last_character_only_at_finish():
    buf = io.StringIO()
    stream = MarkdownStream(Console(file=buf, width=60, force_terminal=False, color_system=None),
                            min_interval=0, max_interval=0)
    stream.feed("Hello world")
    stream.feed("!")
    assert "world!" not in buf.getvalue()
    stream.finish()
    assert "Hello world!" in buf.getvalue()
