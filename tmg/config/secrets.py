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
