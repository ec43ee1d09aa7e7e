"""Streaming Markdown: stable lines are printed once, the result equals a one-go render, each
answer starts afresh, and no moment of the stream shows a line twice (on the screen or in what
scrolled into the terminal's history)."""

from __future__ import annotations

import io
from collections import Counter

from rich.console import Console

from tests.support.vt import VirtualTerminal
from tmg.ui.chat_markdown import ChatMarkdown
from tmg.ui.markdown_stream import MarkdownStream

DOC = ("# Title\n\nA paragraph long enough to wrap over more than one line at this width, "
       "so that wrapping is part of the test.\n\n- one\n- two\n- three\n\n```python\nx = 1\n```\n\nThe end.")
LONG = "\n\n".join(f"Paragraph {i}: some words to make it wrap onto a second line at fifty columns." for i in range(12))


def _plain_console(buf: io.StringIO) -> Console:
    return Console(file=buf, width=50, force_terminal=False, color_system=None)


def _terminal_console(term: VirtualTerminal) -> Console:
    return Console(file=term, width=term.width, height=term.height, force_terminal=True, force_interactive=True,
                   color_system=None)


def _reference(text: str) -> list[str]:
    buf = io.StringIO()
    _plain_console(buf).print(ChatMarkdown(text))
    lines = [line.rstrip() for line in buf.getvalue().splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _stream(stream: MarkdownStream, text: str, step: int = 1) -> None:
    for start in range(0, len(text), step):  # one character per delta: the worst case, a render after each
        stream.feed(text[start:start + step])
    stream.finish()


def test_a_character_by_character_stream_prints_every_line_once():
    buf = io.StringIO()
    _stream(MarkdownStream(_plain_console(buf), min_interval=0, max_interval=0), DOC)
    assert [ln.rstrip() for ln in buf.getvalue().splitlines()] == _reference(DOC)


def test_the_next_answer_starts_afresh():
    buf = io.StringIO()
    stream = MarkdownStream(_plain_console(buf), min_interval=0)
    _stream(stream, "first answer, cut short")
    _stream(stream, "The second answer.")
    assert [ln.rstrip() for ln in buf.getvalue().splitlines()] == ["first answer, cut short", "The second answer."]


def test_on_a_terminal_the_screen_shows_each_line_once_and_no_leftover_tail():
    term = VirtualTerminal(50, 30)
    _stream(MarkdownStream(_terminal_console(term), min_interval=0, max_interval=0), DOC)
    assert term.lines() == _reference(DOC)


def test_a_long_answer_that_scrolls_leaves_each_line_once_in_the_history():
    term = VirtualTerminal(50, 10)
    _stream(MarkdownStream(_terminal_console(term), min_interval=0, max_interval=0), LONG, step=9)
    assert len(_reference(LONG)) > 3 * term.height  # most of it scrolled off the screen
    assert term.lines() == _reference(LONG)


def test_no_moment_of_the_stream_shows_a_line_twice():
    """Each redraw is one write: a terminal that shows any state between writes (a busy machine
    runs tmg late) never has the stable lines and an old tail on it together."""
    term = VirtualTerminal(50, 10)
    text = "first line of the answer\n\nsecond paragraph here\n\n" + LONG
    final = Counter(_reference(text))
    seen_twice: list[list[str]] = []

    def check() -> None:
        shown = Counter(line for line in term.lines() if line)
        if any(count > max(1, final[line]) for line, count in shown.items()):
            seen_twice.append(term.lines())

    term.after_write = check
    _stream(MarkdownStream(_terminal_console(term), min_interval=0, max_interval=0), text, step=7)
    assert seen_twice == []
    assert term.lines() == _reference(text)


def test_a_line_printed_while_it_streams_goes_above_the_tail():
    term = VirtualTerminal(50, 30)
    stream = MarkdownStream(_terminal_console(term), min_interval=0, max_interval=0)
    for ch in "A first paragraph.\n\nAnd a second one":
        stream.feed(ch)
    stream.take_down()
    term.write("tmg: a notice\n")
    stream.put_back()
    for ch in " that ends here.":
        stream.feed(ch)
    stream.finish()
    assert term.lines() == ["tmg: a notice", "A first paragraph.", "", "And a second one that ends here."]


def test_the_tail_is_never_taller_than_the_terminal():
    """A tail taller than the screen would scroll its top into the history, where no redraw can
    erase it: it is kept shorter than the terminal."""
    term = VirtualTerminal(50, 4)
    _stream(MarkdownStream(_terminal_console(term), live_lines=6, min_interval=0, max_interval=0), LONG, step=9)
    assert term.lines() == _reference(LONG)


def test_renders_are_spaced_out_by_their_cost():
    stream = MarkdownStream(_plain_console(io.StringIO()), min_interval=0.0, max_interval=0.5)
    renders = []
    original = stream._render
    stream._render = lambda: (renders.append(1), original())[1]
    for _ in range(200):
        stream.feed("word ")
    stream.finish()
    assert 2 <= len(renders) < 200  # the first render spaces out the following ones
