"""Where the answer goes: plain text (pipes, ``-r``) or streamed Markdown (a terminal)."""

from __future__ import annotations

from typing import IO, Protocol


class AnswerSink(Protocol):
    def feed(self, delta: str) -> None: ...

    def finish(self) -> None: ...


class PlainAnswer:
    """Text exactly as the model sent it, flushed per delta, ending with one newline."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self._last = ""

    def feed(self, delta: str) -> None:
        if delta:
            self._out.write(delta)
            self._out.flush()
            self._last = delta

    def finish(self) -> None:
        if self._last and not self._last.endswith("\n"):
            self._out.write("\n")
        self._out.flush()
        self._last = ""


def make_answer_sink(out: IO[str], *, terminal: bool, raw: bool, no_color: bool) -> AnswerSink:
    if raw or not terminal:
        return PlainAnswer(out)
    from rich.console import Console  # a terminal only: pipes never pay for rich

    from tmg.ui.markdown_stream import MarkdownStream

    return MarkdownStream(Console(file=out, no_color=no_color, highlight=False))
