"""Streaming Markdown without flicker (the aider ``mdstream`` approach).

The whole answer is re-rendered as it grows; lines that can no longer change are printed once,
above a small live tail of the last few lines, which is redrawn in place. Re-rendering costs
more as the answer grows, so renders are spaced out to about ten times their own cost (at
least ``min_interval``), keeping rendering a small share of the CPU on long answers.
One instance serves one answer at a time: :meth:`finish` ends it and makes it ready for the next.
Its last character is shown only by :meth:`finish`, once the turn is stored (``tmg.ui.held_tail``).

Each redraw is one write: erase the old tail, print the lines that became stable, draw the new
tail. Nothing in between is ever on the screen, so a busy machine that runs this process late
shows an older frame, never two at once (rich's ``Live`` drew the old tail again below each
print and erased it only in a second write). The cursor sits at the start of the row below the
tail, so the tail is erased by moving up over exactly the rows it drew.
"""

from __future__ import annotations

import io
import time

from rich.console import Console
from rich.text import Text

from tmg.ui.chat_markdown import ChatMarkdown
from tmg.ui.held_tail import HeldTail

_HIDE_CURSOR, _SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"


class MarkdownStream:
    def __init__(self, console: Console, live_lines: int = 6, min_interval: float = 0.05,
                 max_interval: float = 1.0) -> None:
        self._console = console
        self._live_lines = live_lines
        self._min_interval = min_interval
        self._max_interval = max_interval
        self._interval = min_interval
        self._reset()

    def _reset(self) -> None:
        self._text = ""
        self._tail = HeldTail()
        self._printed = 0  # rendered lines already printed for good
        self._live: list[str] = []  # the tail: rendered lines that may still change
        self._drawn = 0  # rows of the tail on the screen now (0 while taken down)
        self._cursor_hidden = False  # while the tail is redrawn: no cursor jumping over it
        self._last_render = 0.0

    def _render(self) -> list[str]:
        buffer = io.StringIO()
        capture = Console(file=buffer, width=self._console.width, force_terminal=self._console.is_terminal,
                          color_system=self._console.color_system, no_color=self._console.no_color)
        capture.print(ChatMarkdown(self._text))
        lines = buffer.getvalue().splitlines()
        while lines and not Text.from_ansi(lines[-1]).plain.strip():
            lines.pop()  # trailing blank lines come and go as the text grows: never print them early
        return lines

    def feed(self, delta: str) -> None:
        self._text += self._tail.take(delta)
        now = time.monotonic()
        if now - self._last_render >= self._interval:
            self._update(final=False)
            cost = time.monotonic() - now
            self._interval = min(self._max_interval, max(self._min_interval, cost * 10))
            self._last_render = time.monotonic()

    def _held_back(self) -> int:
        """How many of the last lines stay live; fewer than the terminal has rows, so the whole
        tail is always on screen and can be erased (what scrolled off cannot)."""
        if not self._console.is_interactive:
            return self._live_lines  # nothing is drawn live, but the same lines wait for the end
        return max(0, min(self._live_lines, self._console.height - 2))

    def _update(self, final: bool) -> None:
        lines = self._render()
        stable = len(lines) if final else max(self._printed, len(lines) - self._held_back())
        frame = self._erase()
        frame += "".join(line + "\n" for line in lines[self._printed:stable])
        self._printed = max(self._printed, stable)
        self._live = [] if final or not self._console.is_interactive else lines[stable:]
        frame += self._draw()
        self._write(frame)

    def _erase(self) -> str:
        rows, self._drawn = self._drawn, 0
        return f"\r\x1b[{rows}A\x1b[J" if rows else ""

    def _draw(self) -> str:
        if not self._live:
            return ""
        self._drawn = len(self._live)
        hide = "" if self._cursor_hidden else _HIDE_CURSOR
        self._cursor_hidden = True
        return hide + "".join(line + "\n" for line in self._live)

    def take_down(self) -> None:
        """Erase the tail (a line is about to be printed where it was)."""
        self._write(self._erase())

    def put_back(self) -> None:
        """Draw the tail again below what was printed meanwhile."""
        if not self._drawn:
            self._write(self._draw())

    def finish(self) -> None:
        """Print whatever is still live; the answer is complete (or was interrupted)."""
        try:
            self._text += self._tail.release()
            if self._text:
                self._update(final=True)
        finally:
            if self._cursor_hidden:
                self._write(self._erase() + _SHOW_CURSOR)
            self._reset()

    def _write(self, text: str) -> None:
        if not text:
            return
        try:
            self._console.file.write(text)
            self._console.file.flush()
        except (OSError, ValueError):  # the terminal went away (SIGHUP): nothing left to show
            pass
