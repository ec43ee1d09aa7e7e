"""Looking only at what is new: stored history grows by appending between turns.

A transformer that scans the whole history every turn makes a 5,000-message session pay for
all of it on every prompt (quality.md P5). :class:`SeenPrefix` remembers, by identity, how much
of the list was examined last turn: when the first and last examined messages are still the
same objects at the same places, everything before the new tail is unchanged (history is
append-only, and a rewrite replaces every message object).
"""

from __future__ import annotations

from typing import Any, Sequence


class SeenPrefix:
    def __init__(self) -> None:
        self._count = 0
        self._first: Any = None
        self._last: Any = None

    def unchanged(self, messages: Sequence[Any], offset: int = 0) -> int:
        """How many messages from ``offset`` on were examined before and are unchanged (0: all new)."""
        n = self._count
        if n and len(messages) >= offset + n and messages[offset] is self._first \
                and messages[offset + n - 1] is self._last:
            return n
        return 0

    def mark(self, messages: Sequence[Any], offset: int = 0) -> None:
        """Everything from ``offset`` to the end has now been examined."""
        self._count = len(messages) - offset
        self._first = messages[offset] if self._count > 0 else None
        self._last = messages[-1] if self._count > 0 else None
