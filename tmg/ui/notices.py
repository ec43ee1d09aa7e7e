"""Lines for stderr: notices, warnings, tool activity, errors. One line each, redacted."""

from __future__ import annotations

from typing import IO, Callable


class Notices:
    def __init__(self, err: IO[str], redact: Callable[[str], str] = lambda s: s, color: bool = False) -> None:
        self._err = err
        self._redact = redact
        self._color = color

    def set_redactor(self, redact: Callable[[str], str]) -> None:
        self._redact = redact

    def _line(self, prefix: str, text: str, style: str) -> None:
        text = self._redact(text)
        if self._color:
            self._err.write(f"\x1b[{style}m{prefix}\x1b[0m {text}\n")
        else:
            self._err.write(f"{prefix} {text}\n")
        self._err.flush()

    def notice(self, text: str) -> None:
        self._line("tmg:", text, "2")

    def warn(self, text: str) -> None:
        self._line("tmg: warning:", text, "33")

    def error(self, text: str) -> None:
        self._line("tmg: error:", text, "31")

    def tool(self, text: str) -> None:
        self._line("  ·", text, "36")
