"""Streaming Markdown without flicker (the aider ``mdstream`` approach).

The whole answer is re-rendered as it grows; lines that can no longer change are printed once,
above a small live tail of the last few lines, which is redrawn in place. Re-rendering costs
more as the answer grows, so renders are spaced out to about ten times their own cost (at
least ``min_interval``), keeping rendering a small share of the CPU on long answers.
One instance serves one answer at a time: :meth:`finish` ends it and makes it ready for the next.
Its last character is shown only by :meth:`finish`, once the turn is stored (``tmg.ui.answer``).
"""

from __future__ import annotations

import io
import time

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

from tmg.ui.held_tail import HeldTail


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
        self._last_render = 0.0
        self._live: Live | None = None

    def _render(self) -> list[str]:
        buffer = io.StringIO()
        capture = Console(file=buffer, width=self._console.width, force_terminal=self._console.is_terminal,
                          color_system=self._console.color_system, no_color=self._console.no_color)
        capture.print(Markdown(self._text))
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

    def _update(self, final: bool) -> None:
        if self._live is None:
            self._live = Live(Text(""), console=self._console, auto_refresh=False, transient=True,
                              redirect_stdout=False, redirect_stderr=False)
            self._live.start()
        lines = self._render()
        stable = len(lines) if final else max(self._printed, len(lines) - self._live_lines)
        if stable > self._printed:
            self._live.console.print(Text.from_ansi("\n".join(lines[self._printed:stable])))
            self._printed = stable
        tail = "" if final else "\n".join(lines[stable:])
        self._live.update(Text.from_ansi(tail), refresh=True)

    def finish(self) -> None:
        """Print whatever is still live; the answer is complete (or was interrupted)."""
        try:
            self._text += self._tail.release()
            if self._text:
                self._update(final=True)
        finally:
            if self._live is not None:
                self._live.stop()
            self._reset()
