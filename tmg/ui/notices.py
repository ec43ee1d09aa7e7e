"""Lines for stderr: notices, warnings, tool activity, errors. One line each, redacted."""

from __future__ import annotations

from typing import IO, Callable

from tmg.ui.live_region import LiveRegion

Printer = Callable[[Callable[[], None]], None]


class Notices:
    """Lines on stderr; each is printed above the answer streaming on the same terminal
    (``region``: the answer holds it while it streams, see :mod:`tmg.ui.live_region`)."""

    def __init__(self, err: IO[str], redact: Callable[[str], str] = lambda s: s, color: bool = False) -> None:
        self._err = err
        self._redact = redact
        self._color = color
        self._printer: Printer | None = None
        self._before_line: Callable[[], None] = lambda: None
        self.region = LiveRegion()

    def set_redactor(self, redact: Callable[[str], str]) -> None:
        self._redact = redact

    def set_printer(self, printer: Printer | None) -> None:
        """Route each line through ``printer(write)``: the REPL's input line uses it to print
        above a prompt being edited (a hot reload is said while the user types) and redraw it."""
        self._printer = printer

    def set_before_line(self, clear: Callable[[], None]) -> None:
        """Call ``clear`` before each line (it wipes the waiting line, so the two never mix)."""
        self._before_line = clear

    def _line(self, prefix: str, text: str, style: str) -> None:
        text = self._redact(text)
        line = f"\x1b[{style}m{prefix}\x1b[0m {text}\n" if self._color else f"{prefix} {text}\n"

        def write() -> None:
            self._before_line()
            self._err.write(line)
            self._err.flush()

        def above_the_answer() -> None:
            self.region.above(write)

        if self._printer is not None:
            self._printer(above_the_answer)
        else:
            above_the_answer()

    def notice(self, text: str) -> None:
        self._line("tmg:", text, "2")

    def warn(self, text: str) -> None:
        self._line("tmg: warning:", text, "33")

    def error(self, text: str) -> None:
        self._line("tmg: error:", text, "31")

    def tool(self, text: str) -> None:
        self._line("  ·", text, "36")
