"""Where the answer goes: plain text (pipes, ``-r``) or streamed Markdown (a terminal).

Both sinks hold back the answer's last visible character until :meth:`finish`
(:mod:`tmg.ui.held_tail`).
"""

from __future__ import annotations

import os
from typing import IO, Protocol

from tmg.ui.held_tail import HeldTail


class AnswerSink(Protocol):
    def feed(self, delta: str) -> None: ...

    def finish(self) -> None: ...

    def take_down(self) -> None:
        """Erase what is redrawn in place (a line is printed above it meanwhile)."""

    def put_back(self) -> None:
        """Draw it again, below the line printed meanwhile."""


class PlainAnswer:
    """Text exactly as the model sent it, flushed per delta, ending with one newline.

    A reader that goes away (`tmg "q" | head -n 1`) is not a failure of the turn: the rest of
    the answer goes nowhere, quietly, and the turn is stored as usual.
    """

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._tail = HeldTail()
        self._started = False
        self.reader_gone = False

    def feed(self, delta: str) -> None:
        if delta:
            self._started = True
            shown = self._tail.take(delta)
            if shown:
                self._write(shown)

    def finish(self) -> None:
        if self._started:
            rest = self._tail.release()
            self._write(rest if rest.endswith("\n") else rest + "\n")
        self._started = False

    def take_down(self) -> None:
        pass  # nothing is redrawn: text once written stays as it is

    def put_back(self) -> None:
        pass

    def _write(self, text: str) -> None:
        if self.reader_gone:
            return
        try:
            self._out.write(text)
            self._out.flush()
        except BrokenPipeError:
            self.reader_gone = True
            discard_output(self._out)


def discard_output(out: IO[str]) -> None:
    """Point ``out``'s file at /dev/null: its reader is gone, and what is still buffered (flushed
    at exit) must not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, out.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError):
        pass  # not a real file (a test's StringIO): nothing is flushed at exit


def make_answer_sink(out: IO[str], *, terminal: bool, raw: bool, no_color: bool) -> AnswerSink:
    if raw or not terminal:
        return PlainAnswer(out)
    from rich.console import Console  # a terminal only: pipes never pay for rich

    from tmg.ui.markdown_stream import MarkdownStream

    return MarkdownStream(Console(file=out, no_color=no_color, highlight=False))
