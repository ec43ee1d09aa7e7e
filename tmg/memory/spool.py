"""`BatchSpool`: batch engrams that did not land, kept on disk until a later flush lands them.

One JSON file per failed batch under `TMG_HOME/memory/spool/`, written atomically (temp file,
fsync, rename), so a crash leaves either the whole batch or nothing new. The next session's
flush sends the oldest files first and removes each one only once the server accepted it
(memory.md §4: a memory outage loses nothing; a duplicate is harmless, the server returns the
existing id for an identical statement).
A temp file is locked while it is written (`tmg.memory.tempfiles`); one left by a writer that
died is removed by :meth:`BatchSpool.sweep`: its batch is still where it came from (the pending
ring's file is removed only after the spool file is in place), so it holds nothing of its own.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tmg.memory.tempfiles import claim, create_locked

_VERSION = 1
_ITEM_KEYS = ("statement", "scope", "tags")


@dataclass(frozen=True)
class SpoolEntry:
    """One spooled batch: its file, and its engrams `{statement, scope?, tags}`."""

    path: Path
    engrams: tuple[dict[str, Any], ...]


def spool_dir(tmg_home: Path) -> Path:
    return tmg_home / "memory" / "spool"


class BatchSpool:
    """Failed batches on disk, oldest first."""

    def __init__(self, root: Path, warn: Callable[[str], None] = lambda _m: None) -> None:
        self.root = root
        self._warn = warn

    def put(self, engrams: Sequence[dict[str, Any]]) -> Path | None:
        """Keep a batch for a later session; returns its file (None when there was nothing to keep).

        Raises:
            OSError: the spool could not be written (the caller says how many engrams were lost).
        """
        items = [_clean(e) for e in engrams]
        items = [i for i in items if i is not None]
        if not items:
            return None
        self.root.mkdir(parents=True, exist_ok=True)
        # The time first, so names sort oldest first; pid and random bits keep two tmgs apart.
        name = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(3)}.json"
        path = self.root / name
        tmp = self.root / f".{name}.tmp"
        body = json.dumps({"version": _VERSION, "engrams": items}, ensure_ascii=False)
        fd = create_locked(tmp)
        try:
            data = memoryview(body.encode("utf-8"))
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        finally:
            os.close(fd)
        fsync_dir(self.root)
        return path

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
        """The batch landed: forget it (another tmg may have removed it already)."""
        entry.path.unlink(missing_ok=True)

    def _read(self, path: Path) -> SpoolEntry | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            raw = data["engrams"] if isinstance(data, dict) else None
            if not isinstance(raw, list):
                raise ValueError("no engrams list")
        except (OSError, ValueError, KeyError) as exc:
            self._warn(f"memory spool {path}: unreadable ({exc}); left in place, not replayed")
            return None
        items = tuple(i for i in (_clean(e) for e in raw) if i is not None)
        return SpoolEntry(path, items)


def _clean(engram: Any) -> dict[str, Any] | None:
    """Only the keys a batch item may carry; None for anything without a statement."""
    if not isinstance(engram, dict):
        return None
    statement = engram.get("statement")
    if not isinstance(statement, str) or not statement.strip():
        return None
    return {k: engram[k] for k in _ITEM_KEYS if k in engram}


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
