"""Redaction: config secrets never reach history, transcript, logs or the screen."""

from __future__ import annotations

from typing import Callable, Iterable

MASK = "***"


def make_redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function that masks every occurrence of each secret (longest first)."""
    values = sorted({s for s in secrets if s}, key=len, reverse=True)
    if not values:
        return lambda text: text

    def redact(text: str) -> str:
        for value in values:
            if value in text:
                text = text.replace(value, MASK)
        return text

    return redact


def mask(value: str) -> str:
    """A secret shown as its shape only: enough to tell which key is set, never the key."""
    if not value:
        return "(not set)"
    return MASK if len(value) < 12 else f"{value[:3]}…{MASK}"


class Redactor:
    """A redactor whose secrets can grow: a reload may bring a new key, and old ones stay masked."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        self._redact: Callable[[str], str] = make_redactor(())
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        fresh = {s for s in secrets if s} - self._values
        if fresh:
            self._values |= fresh
            self._redact = make_redactor(self._values)

    def __call__(self, text: str) -> str:
        return self._redact(text)
