"""What a finished turn taught, for the LEARN tiers that write answers (`capture`, `batch`).

Classification is by the hook's own `error` argument, never a stale field:
1. the turn has a response -> its text (non-thought text parts joined by newlines);
2. no response and an error -> an error episode `{error, prompt}`, unless the error is transient
   (rate limit, provider timeout after retries) or the user interrupted: those are skipped;
3. neither -> the last model message stored this turn; a tool-call-only turn has no text: skipped.
"""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

from tmg.engine.turn import Turn
from tmg.llm.gateway import ErrorKind, GatewayError
from tmg.memory import payloads

_THOUGHT_TYPES = frozenset({"thinking", "reasoning", "redacted_thinking"})


class Episode(NamedTuple):
    """What a turn taught: its text, or an error with the prompt that caused it."""

    text: str | None = None
    error: str | None = None
    prompt: str = ""

    @property
    def summary(self) -> str:
        """The capture summary: the text, or `error: <error> | user: <prompt>`; at most 2000 bytes."""
        if self.text is not None:
            return payloads.capture_summary(self.text)
        return payloads.capture_summary(error=self.error or "error", prompt=self.prompt)


def is_transient(error: BaseException) -> bool:
    """Rate limits and timeouts that outlived the retries: not worth remembering."""
    if isinstance(error, GatewayError):
        return error.kind in (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)
    return isinstance(error, TimeoutError)  # asyncio.TimeoutError is TimeoutError since 3.11


def content_text(content: Any) -> str:
    """A message's text: a string, or its non-thought text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("thought") or part.get("type") in _THOUGHT_TYPES:
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def classify(turn: Turn, error: BaseException | None) -> Episode | None:
    """The turn's episode, or None when it taught nothing worth writing."""
    completion = turn.completion
    if completion is not None and not completion.is_empty:
        text = completion.text
        return Episode(text=text) if text.strip() else None  # tool calls only: nothing to learn
    if error is not None:
        if isinstance(error, (asyncio.CancelledError, KeyboardInterrupt)) or is_transient(error):
            return None
        return Episode(error=str(error) or type(error).__name__, prompt=turn.user_text)
    for message in reversed(turn.stored):
        if message.get("role") == "assistant":
            text = content_text(message.get("content"))
            return Episode(text=text) if text.strip() else None
    return None
