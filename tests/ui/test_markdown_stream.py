"""Streaming Markdown: stable lines are printed once, the result equals a one-go render, and
each answer starts afresh."""

from __future__ import annotations

import io
import re

from rich.console import Console
from rich.markdown import Markdown

from tmg.ui.markdown_stream import MarkdownStream

DOC = ("# Title\n\nA paragraph long enough to wrap over more than one line at this width, "
       "so that wrapping is part of the test.\n\n- one\n- two\n- three\n\n```python\nx = 1\n```\n\nThe end.")


def _screen(output: str) -> list[str]:
    """What a terminal shows after ``output``: enough of a VT100 for rich's Live (erase line,
    cursor up, carriage return); styles and cursor visibility are ignored."""
    rows: list[str] = [""]
    row = col = 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]", output):
        if token == "\n":
            row, col = row + 1, 0
            if row == len(rows):
                rows.append("")
        elif token == "\r":
            col = 0
        elif token.startswith("\x1b"):
            if token.endswith("K"):
                rows[row] = ""
            elif token.endswith("A") and not token.startswith("\x1b[?"):
                row = max(0, row - int(token[2:-1] or 1))
        else:
            line = rows[row].ljust(col)
            rows[row] = line[:col] + token + line[col + 1:]
            col += 1
    return [r.rstrip() for r in rows]


def _plain_console(buf: io.StringIO) -> Console:
    return Console(file=buf, width=50, force_terminal=False, color_system=None)


def _reference(text: str) -> list[str]:
    buf = io.StringIO()
    _plain_console(buf).print(Markdown(text))
    lines = buf.getvalue().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _stream(stream: MarkdownStream, text: str) -> None:
    for ch in text:  # the worst case: one character per delta, a render after each
        stream.feed(ch)
    stream.finish()


def test_a_character_by_character_stream_prints_every_line_once():
    buf = io.StringIO()
    _stream(MarkdownStream(_plain_console(buf), min_interval=0, max_interval=0), DOC)
    assert buf.getvalue().splitlines() == _reference(DOC)


def test_the_next_answer_starts_afresh():
    buf = io.StringIO()
    stream = MarkdownStream(_plain_console(buf), min_interval=0)
    _stream(stream, "first answer, cut short")
    _stream(stream, "The second answer.")
    assert [ln.rstrip() for ln in buf.getvalue().splitlines()] == ["first answer, cut short", "The second answer."]


def test_on_a_terminal_the_screen_shows_each_line_once_and_no_leftover_tail():
    buf = io.StringIO()
    console = Console(file=buf, width=50, force_terminal=True, color_system=None)
    _stream(MarkdownStream(console, min_interval=0, max_interval=0), DOC)
    assert buf.getvalue().count("\x1b[2K") > 50  # the live tail was redrawn many times
    shown = _screen(buf.getvalue())
    while shown and not shown[-1]:
        shown.pop()
    assert shown == [ln.rstrip() for ln in _reference(DOC)]


def test_renders_are_spaced_out_by_their_cost():
    stream = MarkdownStream(_plain_console(io.StringIO()), min_interval=0.0, max_interval=0.5)
    renders = []
    original = stream._render
    stream._render = lambda: (renders.append(1), original())[1]
    for _ in range(200):
        stream.feed("word ")
    stream.finish()
    assert 2 <= len(renders) < 200  # the first render spaces out the following ones
