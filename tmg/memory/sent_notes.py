"""`SentNotes`: which recalled notes went with a session's recent prompts.

A note rides with the latest user turn of one request and is never stored, and whatever rides
there is read again by the model server on every prompt that carries it (its prefix cache ends
where the previous request's rider began). So a note is sent again only once the session's last
WINDOW prompts went without it: recall that brings nothing new sends nothing.

One-shots continuing a session are separate processes, so the record is one small file under
TMG_HOME (`memory/sent-notes.json`, 0600) holding the SESSIONS sessions used last: read at a
session's first prompt, replaced after a prompt that sent notes (or followed one that did). Two
tmgs writing it at once may each drop the other's last entry, and a file that cannot be read or
written costs only notes sent again: never a wrong or missing answer.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tmg.atomic_file import replace_file

WINDOW = 10  # prompts
SESSIONS = 64


def sent_file(tmg_home: Path) -> Path:
    return tmg_home / "memory" / "sent-notes.json"


class SentNotes:
    """The note ids sent with each of one session's last WINDOW prompts (no file: memory only)."""

    def __init__(self, path: Path | None, session_id: str) -> None:
        self._path = path
        self._session = session_id
        self._recent: deque[tuple[str, ...]] | None = None

    def _load(self) -> deque[tuple[str, ...]]:
        if self._recent is None:
            self._recent = deque(maxlen=WINDOW)
            for ids in _read(self._path).get(self._session, [])[-WINDOW:]:
                if isinstance(ids, list):
                    self._recent.append(tuple(str(i) for i in ids))
        return self._recent

    def new(self, ids: Iterable[str]) -> list[str]:
        """Those of `ids` that none of the recent prompts carried."""
        seen = {i for prompt in self._load() for i in prompt}
        return [i for i in ids if i not in seen]

    def record(self, ids: Iterable[str]) -> None:
        """What this prompt sent (nothing, too: the window counts prompts)."""
        recent = self._load()
        before = any(recent)
        recent.append(tuple(ids))
        if self._path is None or not (before or recent[-1]):
            return  # nothing sent in the window: nothing to keep
        sessions = {k: v for k, v in _read(self._path).items() if k != self._session}
        sessions[self._session] = [list(p) for p in recent]  # last: the most recently used
        kept = dict(list(sessions.items())[-SESSIONS:])
        try:
            replace_file(self._path, json.dumps(kept).encode())
        except OSError:
            pass


def _read(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: every note is new
    return data if isinstance(data, dict) else {}
