"""The bottom of the terminal while an answer streams, and its one owner.

A streamed answer keeps its last few lines live: redrawn in place at the bottom of the
terminal. Anything else written there meanwhile (a notice, a tool line, a question) would land
among them, and the next redraw, which moves the cursor up over as many rows as it drew, would
leave a copy of the answer behind. So whatever writes goes through the one :class:`LiveRegion`:
a line is printed *above* the live lines (they are taken down, the line is written, they are
put back), and a question first makes them final (:meth:`LiveRegion.settle`).
"""

from __future__ import annotations

from typing import Callable, Protocol


class Live(Protocol):
    """Something redrawn in place at the bottom of the terminal (the streamed answer)."""

    def take_down(self) -> None:
        """Erase the live lines; the cursor goes back to where they began."""

    def put_back(self) -> None:
        """Draw the live lines again, where the cursor is now."""

    def settle(self) -> None:
        """Show what is live as final: nothing stays live."""


class LiveRegion:
    """Who is live at the bottom of the terminal now: nobody, or one :class:`Live`."""

    def __init__(self) -> None:
        self._live: Live | None = None

    def hold(self, live: Live) -> None:
        """``live`` draws at the bottom from now on; whoever was live before is settled first."""
        if self._live is not None and self._live is not live:
            self.settle()
        self._live = live

    def let_go(self, live: Live) -> None:
        if self._live is live:
            self._live = None

    def above(self, write: Callable[[], None]) -> None:
        """Run ``write`` (it prints whole lines) above whatever is live."""
        live = self._live
        if live is None:
            write()
            return
        live.take_down()
        try:
            write()
        finally:
            live.put_back()

    def settle(self) -> None:
        """Make what is live final, before something that is not a line (a question) is shown."""
        live, self._live = self._live, None
        if live is not None:
            live.settle()
