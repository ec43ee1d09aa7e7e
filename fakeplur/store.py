"""The fake's memory: engrams and episodes, optionally persisted to one JSON file.

Writes are atomic (temp file in the same folder, fsync, rename) after every mutation, and the
file is re-read when another process changed it, so two sessions in a row (or two fakes) see
each other's writes, as two real servers on one store do. A read-modify-write holds `locked()`
(a lock on the store's folder), so a fake that read the file before another one wrote it never
writes its stale copy over that write.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import random
import re
import string
import tempfile
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

TYPES = ("behavioral", "terminological", "procedural", "architectural")
# The real server derives a Bloom level from the type; inject sorts engrams by it.
TYPE_TO_COGNITIVE = {
    "behavioral": "apply",
    "terminological": "remember",
    "procedural": "apply",
    "architectural": "evaluate",
}
_LINE_TERMINATORS = re.compile(r"[ \t]*[\r\n\u2028\u2029\u0085\u000b\u000c\u001c-\u001f]+[ \t]*")


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def iso_ms(moment: datetime) -> str:
    """ISO timestamp with milliseconds and Z, as JavaScript's toISOString prints it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def collapse_line_terminators(statement: str) -> str:
    """The real server folds line breaks (and spaces around them) into one space."""
    return _LINE_TERMINATORS.sub(" ", statement).rstrip()


def sanitize_statement(raw: str) -> str:
    """Cut at leaked tool-call markup, as the real learn handlers do."""
    cut = len(raw)
    for marker in ("</statement>", "<parameter name="):
        pos = raw.find(marker)
        if pos != -1 and pos < cut:
            cut = pos
    return raw[:cut].rstrip()


def normalize_statement(statement: str) -> str:
    """Lowercase, drop everything but letters, digits, marks, '_' and spaces, squeeze spaces."""
    kept = "".join(
        ch for ch in statement.lower() if ch == "_" or ch.isspace() or unicodedata.category(ch)[0] in "LNM"
    )
    return " ".join(kept.split())


def content_hash(statement: str) -> str:
    return hashlib.sha256(normalize_statement(statement).encode("utf-8")).hexdigest()


@dataclass
class Store:
    """Engrams and episodes in memory, mirrored to `path` when one is given."""

    path: Path | None = None
    engrams: list[dict[str, Any]] = field(default_factory=list)
    episodes: list[dict[str, Any]] = field(default_factory=list)
    _seen: tuple[int, int, int] | None = None  # (inode, mtime, size): every save is a new file

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None) -> Store:
        store = cls(path=Path(path) if path else None)
        store.refresh()
        return store

    def refresh(self) -> None:
        """Re-read the file if someone else changed it since we last read or wrote it."""
        if self.path is None:
            return
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if stamp == self._seen:
            return
        raw = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        self.engrams = list(raw.get("engrams", []))
        self.episodes = list(raw.get("episodes", []))
        self._seen = stamp

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the lock on the store's folder (other fakes on this store wait; no file is added
        beside it), the copy refreshed first."""
        if self.path is None:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        folder = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(folder, fcntl.LOCK_EX)
            self.refresh()
            yield
        finally:
            os.close(folder)  # closing the last descriptor releases the lock

    def save(self) -> None:
        """Write the whole store atomically (no reader ever sees half a file)."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"engrams": self.engrams, "episodes": self.episodes}, indent=2, ensure_ascii=False)
        fd, tmp = tempfile.mkstemp(prefix=".fakeplur-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        stat = self.path.stat()
        self._seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)

    def active_engrams(self) -> list[dict[str, Any]]:
        return [e for e in self.engrams if e.get("status", "active") == "active"]

    def find_duplicate(self, statement: str) -> dict[str, Any] | None:
        """An active engram with the same normalized statement (any scope), as the real one finds."""
        if not normalize_statement(statement):
            return None
        digest = content_hash(statement)
        return next((e for e in self.active_engrams() if e.get("content_hash") == digest), None)

    def next_engram_id(self, moment: datetime) -> str:
        """`ENG-YYYY-MM-DD-NNN`: today's (UTC) highest suffix plus one."""
        prefix = f"ENG-{moment.strftime('%Y-%m-%d')}-"
        suffixes = [int(e["id"][len(prefix):]) for e in self.engrams
                    if e.get("id", "").startswith(prefix) and e["id"][len(prefix):].isdigit()]
        return f"{prefix}{max(suffixes, default=0) + 1:03d}"

    def add_engram(self, statement: str, ctx: dict[str, Any], moment: datetime | None = None) -> dict[str, Any]:
        """Store a new engram shaped like the real one's (defaults: behavioral, global, leaning)."""
        moment = moment or now_utc()
        kind = ctx.get("type") or "behavioral"
        engram: dict[str, Any] = {
            "id": ctx.get("id") or self.next_engram_id(moment),
            "statement": statement,
            "type": kind,
            "scope": ctx.get("scope") or "global",
            "status": "active",
            "commitment": ctx.get("commitment") or "leaning",
            "pinned": ctx.get("pinned") is True,
            "tags": list(ctx.get("tags") or []),
            "cognitive_level": TYPE_TO_COGNITIVE.get(kind, "remember"),
            "retrieval_strength": 0.7,
            "learned_at": iso_ms(moment),
            "last_accessed": moment.strftime("%Y-%m-%d"),
            "content_hash": content_hash(statement),
        }
        for key in ("domain", "rationale", "source"):
            if ctx.get(key):
                engram[key] = ctx[key]
        self.engrams.append(engram)
        return engram

    def add_episode(self, summary: str, ctx: dict[str, Any]) -> dict[str, Any]:
        """Store an episode; `session_id` is kept, as the real one keeps it."""
        moment = now_utc()
        millis = int(moment.timestamp() * 1000)
        suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=4))
        episode: dict[str, Any] = {"id": f"EP-{millis}-{suffix}", "summary": summary, "timestamp": iso_ms(moment)}
        for key in ("agent", "channel", "session_id", "tags"):
            if ctx.get(key) is not None:
                episode[key] = ctx[key]
        self.episodes.append(episode)
        return episode


def load_seed(value: str) -> list[Any]:
    """FAKE_PLUR_SEED: a JSON list inline, or the path of a JSON file holding one."""
    text = value.strip()
    if not text.startswith(("[", "{")):
        text = Path(text).read_text(encoding="utf-8")
    data = json.loads(text)
    if isinstance(data, dict):
        data = data.get("engrams", [])
    if not isinstance(data, list):
        raise ValueError("FAKE_PLUR_SEED must be a JSON list of engrams (strings or objects)")
    return data


