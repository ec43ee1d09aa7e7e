"""``tmg sessions --search WORDS``: the messages of the stored histories that hold every word, newest
sessions first, without a model.

Bounded: at most MAX_HITS messages are returned, and at most MAX_SCAN_BYTES of history are read
(a session's newest part first when it alone is larger); what was left unread is said. A line is
parsed only when its raw bytes hold every word, so a search reads mostly bytes, not JSON.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Iterable

from tmg.session.store import SessionRef

MAX_HITS = 20
MAX_SCAN_BYTES = 64 * 1024 * 1024
SNIPPET_CHARS = 160
_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Hit:
    ref: SessionRef
    role: str
    ts: float | None
    snippet: str  # the message around its first word, on one line


@dataclass
class Found:
    hits: list[Hit] = field(default_factory=list)
    sessions_read: int = 0
    sessions_left: int = 0  # not read: the byte bound was reached first
    cut: bool = False  # MAX_HITS reached: there may be more


def search(refs: Iterable[SessionRef], words: list[str], max_hits: int = MAX_HITS,
           max_bytes: int = MAX_SCAN_BYTES) -> Found:
    """The messages of ``refs`` (in that order) whose text holds every word, case-insensitively."""
    wanted = [w.lower() for w in words if w.strip()]
    needles = [w.encode("utf-8") for w in wanted]
    found = Found()
    budget = max_bytes
    refs = list(refs)
    for index, ref in enumerate(refs):
        if budget <= 0:
            found.sessions_left = len(refs) - index
            break
        data, read = _tail(ref.history_path, budget)
        budget -= read
        found.sessions_read += 1
        for raw in reversed(data.split(b"\n")):  # the newest messages of a session first
            if not all(n in raw.lower() for n in needles):
                continue
            hit = _hit(ref, raw, wanted)
            if hit is not None:
                found.hits.append(hit)
                if len(found.hits) >= max_hits:
                    found.cut = True
                    found.sessions_left = len(refs) - index - 1
                    return found
    return found


def _tail(path, limit: int) -> tuple[bytes, int]:
    """The file's last ``limit`` bytes (all of it when smaller), from a line's start; and how many
    bytes were read."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            start = max(0, size - limit)
            f.seek(start)
            data = f.read(limit)
    except OSError:
        return b"", 0
    read = len(data)
    if start:
        data = data.partition(b"\n")[2]  # a line cut in two is not a message
    return data, read


def _hit(ref: SessionRef, raw: bytes, wanted: list[str]) -> Hit | None:
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("role") not in _ROLES:
        return None
    content = record.get("content")
    text = content if isinstance(content, str) else " ".join(
        str(p.get("text", "")) for p in content if isinstance(p, dict)) if isinstance(content, list) else ""
    lowered = text.lower()
    if not text or not all(w in lowered for w in wanted):
        return None
    ts = record.get("ts")
    return Hit(ref, record["role"], ts if isinstance(ts, (int, float)) else None, snippet(text, lowered.index(wanted[0])))


def snippet(text: str, at: int, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around position ``at``, on one line."""
    start = max(0, at - width // 3)
    piece = " ".join(text[start:start + width].split())
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")
