"""A terminal for rendering tests: what a VT100 of ``width`` x ``height`` shows after some output,
and what scrolled off into its history (pyte, a real emulator, with the tty's newline-to-CRLF)."""

from __future__ import annotations

import pyte


class VirtualTerminal:
    """A file-like terminal: write to it, then read :meth:`lines` (history first, then the screen)."""

    def __init__(self, width: int = 50, height: int = 12) -> None:
        self.width, self.height = width, height
        self.screen = pyte.HistoryScreen(width, height, history=10_000)
        self.screen.set_mode(pyte.modes.LNM)  # "\n" also returns the carriage, as a tty's ONLCR does
        self._stream = pyte.Stream(self.screen)
        self.after_write = lambda: None  # a test's check after every single write

    def write(self, text: str) -> int:
        self._stream.feed(text)
        self.after_write()
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    def _row(self, row) -> str:
        return "".join(row[x].data for x in range(self.width)).rstrip()

    def lines(self) -> list[str]:
        """Every row shown so far (the history, then the screen), without the blank rows at the end."""
        rows = [self._row(row) for row in self.screen.history.top]
        rows += [line.rstrip() for line in self.screen.display]
        while rows and not rows[-1]:
            rows.pop()
        return rows
