"""`BatchSpool`: memory writes that did not land, kept on disk until a later flush lands them.

One JSON file per failed write under `TMG_HOME/memory/spool/`, written atomically (temp file,
fsync, rename), so a crash leaves either the whole write or nothing new: a batch of engrams, a
capture (`plur_capture` payload) or a gated learn (`plur_learn` payload). The next session's
flush sends the oldest files first and removes each one only once the server accepted it
(memory.md §4: a memory outage loses nothing; a duplicate is harmless, the server returns the
existing id for an identical statement).
A temp file is locked while it is written (`tmg.memory.tempfiles`); one left by a writer that
died is removed by :meth:`BatchSpool.sweep`: its write is still where it came from (the pending
ring's file is removed only after the spool file is in place), so it holds nothing of its own.

A write the server refuses as invalid (not a transport failure) is tried at most MAX_TRIES times
(the count lives in its file), then moved to `spool/quarantine/`: reported once with its file,
never blocking the writes behind it. Everything written passes the scrubber (no secrets on disk),
in folders created 0700 and files created 0600 (`tmg.private_files`, `tmg.memory.tempfiles`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tmg.memory.tempfiles import claim, create_locked
from tmg.private_files import private_dirs

_VERSION = 2
_ITEM_KEYS = ("statement", "scope", "tags", "source")
_WRITE_KEYS = {
    "capture": ("summary", "agent", "session_id"),
    "learn": ("statement", "tags", "scope", "source", "pinned"),
}
# How many times a write the server refuses as invalid is offered before it is quarantined.
MAX_TRIES = 3
QUARANTINE = "quarantine"


class SpoolEntry(NamedTuple):
    """One spooled write: its file, and a batch's engrams `{statement, scope?, tags, source?}`
    or (kind "capture" / "learn") the call's payload; `tries` counts refusals by the server."""

    path: Path
    engrams: tuple[dict[str, Any], ...]
    kind: str = "batch"
    write: dict[str, Any] | None = None
    tries: int = 0


def spool_dir(tmg_home: Path) -> Path:
    return tmg_home / "memory" / "spool"


class BatchSpool:
    """Failed batches on disk, oldest first."""

    def __init__(self, root: Path, warn: Callable[[str], None] = lambda _m: None,
                 scrub: Callable[[str], str] = lambda s: s) -> None:
        self.root = root
        self._warn = warn
        self._scrub = scrub

    def put(self, engrams: Sequence[dict[str, Any]]) -> Path | None:
        """Keep a batch for a later session; returns its file (None when there was nothing to keep).

        Raises:
            OSError: the spool could not be written (the caller says how many engrams were lost).
        """
        items = [_clean(e, self._scrub) for e in engrams]
        items = [i for i in items if i is not None]
        if not items:
            return None
        return _write_new(self.root, {"version": _VERSION, "engrams": items})

    def put_write(self, kind: str, payload: dict[str, Any]) -> Path | None:
        """Keep one capture or learn call (its payload) for a later session.

        Raises:
            OSError: the spool could not be written.
        """
        write = _clean_write(kind, payload, self._scrub)
        if write is None:
            return None
        return _write_new(self.root, {"version": _VERSION, "kind": kind, "write": write})

    def refused(self, entry: SpoolEntry) -> Path | None:
        """The server refused `entry` as invalid once more: count it in its file; at MAX_TRIES,
        move it to the quarantine and return its new path (the caller reports it, once)."""
        tries = entry.tries + 1
        if tries >= MAX_TRIES:
            return self.quarantine(entry.path)
        body: dict[str, Any] = {"version": _VERSION, "kind": entry.kind, "tries": tries}
        if entry.kind == "batch":
            body["engrams"] = list(entry.engrams)
        else:
            body["write"] = entry.write
        try:
            _write_at(entry.path, body)
        except OSError:
            pass  # the count is a bound, not a promise: the next session counts again
        return None

    def quarantine(self, path: Path) -> Path | None:
        """Move a spooled file out of the replay queue; its new path (None if it is gone)."""
        target = self.root / QUARANTINE / path.name
        try:
            private_dirs(target.parent)
            os.replace(path, target)
        except OSError:
            return None
        return target

    def quarantine_items(self, items: Sequence[dict[str, Any]]) -> Path | None:
        """Keep batch items the server refused one by one (with its reasons) in the quarantine,
        for the user to read: retrying a blank statement or a detected secret cannot help."""
        kept = [{k: self._scrub(v) if isinstance(v, str) else v for k, v in i.items()} for i in items]
        return _write_new(self.root / QUARANTINE, {"version": _VERSION, "kind": "refused_items", "items": kept})

    def pending(self, limit: int | None = None) -> list[SpoolEntry]:
        """Spooled batches, oldest first; an unreadable file is reported and left in place."""
        if not self.root.is_dir():
            return []
        entries = []
        for path in sorted(self.root.glob("*.json")):
            entry = self._read(path)
            if entry is not None:
                entries.append(entry)
            if limit is not None and len(entries) >= limit:
                break
        return entries

    def sweep(self) -> int:
        """Remove the temp files of writers that died before their rename; returns how many."""
        if not self.root.is_dir():
            return 0
        swept = 0
        for tmp in self.root.glob(".*.json.tmp"):
            fd = claim(tmp)
            if fd is None:
                continue  # still being written
            try:
                tmp.unlink(missing_ok=True)
                swept += 1
            except OSError:
                pass  # left for a later sweep
            finally:
                os.close(fd)
        return swept

    def remove(self, entry: SpoolEntry) -> None:
        """The write landed: forget it (another tmg may have removed it already)."""
        self.remove_path(entry.path)

    def remove_path(self, path: Path) -> None:
        path.unlink(missing_ok=True)

    def _read(self, path: Path) -> SpoolEntry | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            kind = data.get("kind", "batch")
            tries = data.get("tries", 0) if isinstance(data.get("tries"), int) else 0
            if kind in _WRITE_KEYS:
                write = data.get("write")
                if not isinstance(write, dict):
                    raise ValueError(f"no {kind} payload")
                return SpoolEntry(path, (), kind, _clean_write(kind, write, self._scrub), tries)
            raw = data["engrams"]
            if not isinstance(raw, list):
                raise ValueError("no engrams list")
        except (OSError, ValueError, KeyError) as exc:
            target = self.quarantine(path)
            self._warn(f"memory spool {path}: unreadable ({exc}); moved to {target or 'nowhere'}, not replayed")
            return None
        items = tuple(i for i in (_clean(e, self._scrub) for e in raw) if i is not None)
        return SpoolEntry(path, items, "batch", None, tries)


def _write_new(root: Path, body: dict[str, Any]) -> Path:
    private_dirs(root)
    # The time first, so names sort oldest first; pid and random bits keep two tmgs apart.
    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(3).hex()}.json"
    path = root / name
    _write_at(path, body)
    return path


def _write_at(path: Path, body: dict[str, Any]) -> None:
    tmp = path.parent / f".{path.name}.tmp"
    fd = create_locked(tmp)  # locked while written: a sweep never takes a live writer's file
    try:
        data = memoryview(json.dumps(body, ensure_ascii=False).encode("utf-8"))
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    fsync_dir(path.parent)


def _clean(engram: Any, scrub: Callable[[str], str] = lambda s: s) -> dict[str, Any] | None:
    """Only the keys a batch item may carry, secrets masked; None for anything without a statement."""
    if not isinstance(engram, dict):
        return None
    statement = engram.get("statement")
    if not isinstance(statement, str) or not statement.strip():
        return None
    item = {k: engram[k] for k in _ITEM_KEYS if k in engram}
    item["statement"] = scrub(statement)
    return item


def _clean_write(kind: str, payload: dict[str, Any], scrub: Callable[[str], str]) -> dict[str, Any] | None:
    """Only the keys of that call, its text scrubbed; None for a write with no text."""
    text_key = "summary" if kind == "capture" else "statement"
    text = payload.get(text_key)
    if kind not in _WRITE_KEYS or not isinstance(text, str) or not text.strip():
        return None
    write = {k: payload[k] for k in _WRITE_KEYS[kind] if k in payload}
    write[text_key] = scrub(text)
    return write


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in ``path`` durable (best effort)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
