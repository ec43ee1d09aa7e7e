"""The answer's last visible character, held back until the turn is stored.

Both answer sinks (plain text and streamed Markdown) show it only at ``finish``, which the
console calls once the turn is stored: an answer the user saw in full is an answer in history,
even after a ``kill -9`` (SPEC: "shown" implies "stored").
"""

from __future__ import annotations


class HeldTail:
    """Splits streamed text into what may be shown now and a small tail kept for the end.

    The tail is the last non-whitespace character and what follows it: a few bytes, so the
    per-chunk cost stays one short ``rstrip``.
    """

    def __init__(self) -> None:
        self.held = ""

    def take(self, delta: str) -> str:
        """Add ``delta``; return the text that may be shown now."""
        held = self.held + delta
        cut = len(held.rstrip()) - 1  # the last visible character stays held
        if cut <= 0:
            self.held = held
            return ""
        self.held = held[cut:]
        return held[:cut]

    def release(self) -> str:
        held, self.held = self.held, ""
        return held
