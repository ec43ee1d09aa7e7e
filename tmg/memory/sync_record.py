"""The record of a store's last sync: `$TMG_HOME/memory-sync/<store digest>.json` (0600).

Whoever syncs writes it: `tmg memory sync`, or the memory broker when a session's end asked it
to (`tmg/detach`: the broker writes PLUR's answer as it came; `tmg.memory.sync` reads it). It is
what `tmg memory status` says about the last sync and what tells a session's end whether the
next sync is due. Beside it, `<digest>.told` holds the reason of the last failure the user was
told about: a failed sync is said once (by the next session's end), not again while later
retries fail the same way, and again once a sync has worked in between.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, NamedTuple

from tmg.atomic_file import replace_file

RECORD_DIR = "memory-sync"
# A session's end that wrote nothing still syncs (to pull) when the last sync is older than this.
PULL_EVERY_S = 600.0
BY_SESSION_END = "the session end"
BY_COMMAND = "tmg memory sync"


class SyncRecord(NamedTuple):
    at: float  # when the sync finished (seconds since the epoch)
    by: str
    is_error: bool  # PLUR's (or tmg's) answer was an error
    text: str  # the answer: PLUR's JSON text, or the error's words

    def as_json(self) -> str:
        return json.dumps(self._asdict(), indent=1) + "\n"


def record_path(home: Path, store: Path) -> Path:
    """The record of the store at `store` (a PLUR root: `~/.plur`, or PLUR_PATH)."""
    digest = hashlib.sha256(str(store.expanduser()).encode()).hexdigest()[:16]
    return home / RECORD_DIR / f"{digest}.json"


def read_record(path: Path) -> SyncRecord | None:
    """The last record, or None when there is none (or it is unreadable: the next sync rewrites it)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        return SyncRecord(float(data["at"]), str(data["by"]), bool(data["is_error"]), str(data["text"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_record(path: Path, record: SyncRecord) -> None:
    replace_file(path, record.as_json().encode(), private_folder=True)


def _told_path(path: Path) -> Path:
    return path.with_suffix(".told")


def told(path: Path) -> str | None:
    """The failure reason the user was last told about (None: none since the last good sync)."""
    try:
        return _told_path(path).read_text(encoding="utf-8")
    except OSError:
        return None


def tell(path: Path, reason: str | None) -> None:
    """Keep `reason` as told (None: a sync worked, so the next failure is told whatever it is)."""
    if reason is None:
        _told_path(path).unlink(missing_ok=True)
    else:
        replace_file(_told_path(path), reason.encode(), private_folder=True)


def due(record: SyncRecord | None, wrote: bool, now: float | None = None) -> bool:
    """Whether a session's end syncs: there was no sync yet; the session wrote to memory (push
    it); the last sync is older than PULL_EVERY_S (pull the other machines'). A failed one is
    retried only once it is that old: PLUR holds the store's lock while it syncs (every recall
    waits), and a remote that is down must not cost that at every session's end."""
    if record is None:
        return True
    old = (time.time() if now is None else now) - record.at >= PULL_EVERY_S
    return old if record.is_error else wrote or old
