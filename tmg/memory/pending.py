"""`PendingRing`: the session's batch ring, also on disk, so a crash (SIGKILL) loses no engram.

Each ring item is appended as one JSON line to a file of this ring's own under
`TMG_HOME/memory/spool/pending/`, fsync'd like history at turn end. The owning process holds an
exclusive `flock` on the file for as long as it lives (the kernel drops it when the process dies,
however it dies), so another tmg can tell an orphan from a live session's ring without trusting
pids. The session end sends the ring and removes its file once it lands (spooling it when the
send fails); a later session's flush turns every
orphan into a spooled batch (its last RING_SIZE items: the ring's bound) and removes it, so the
spool replay lands it. A duplicate is harmless (the server returns the existing id).
A ring rewrite goes through a temp file (`*.tmp`, locked the same way: `tmg.memory.tempfiles`);
a process killed before its rename leaves the newest ring there, so a temp file whose writer is
gone is an orphan too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tmg.memory.spool import fsync_dir
from tmg.memory.tempfiles import claim, create_locked, read_all
from tmg.private_files import private_dirs

_SUFFIX = ".jsonl"
_TEMP_SUFFIX = ".tmp"


def pending_dir(spool_root: Path) -> Path:
    return spool_root / "pending"


@dataclass
class Orphan:
    """A ring left behind by a process that is gone; `close()` once it is spooled (or skipped)."""

    path: Path
    items: list[dict[str, Any]]
    fd: int

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class PendingRing:
    """One session's ring file. Writing is best effort: a failure is reported once and the ring
    stays in memory only (it is still spooled or sent at the end)."""

    def __init__(self, root: Path, session_id: str, ring_size: int,
                 debug: Callable[[str], None] = lambda _m: None) -> None:
        self.root = root
        self.session_id = session_id
        self._ring_size = ring_size
        self._debug = debug
        self.path: Path | None = None
        self._fd: int | None = None
        self._lines = 0
        self._broken = False

    @property
    def durable(self) -> bool:
        """Everything appended so far is on disk."""
        return self.path is not None and not self._broken

    def append(self, item: dict[str, Any], ring: list[dict[str, Any]]) -> None:
        """Append `item` (already in `ring`, the whole in-memory ring, oldest first)."""
        if self._broken:
            return
        try:
            if self._fd is None or self._lines >= 2 * self._ring_size:
                self._rewrite(ring)  # first item, or compaction: the file holds the ring only
            else:
                _write_all(self._fd, _line(item))
                os.fsync(self._fd)
                self._lines += 1
        except OSError as exc:
            self._broken = True
            self._debug(f"memory: the batch ring could not be written to disk ({exc}); it is kept in memory only")

    def discard(self) -> None:
        """The ring is spooled or landed (or dropped): forget the file."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        self._close()
        self.path = None
        self._lines = 0

    def _rewrite(self, ring: list[dict[str, Any]]) -> None:
        """A new locked file holding `ring`, in place before the old one goes (a crash between
        the two leaves a duplicate, never a gap)."""
        private_dirs(self.root)
        name = f"{self.session_id}-{os.getpid()}-{os.urandom(4).hex()}"
        tmp = self.root / f"{name}{_TEMP_SUFFIX}"
        fd = create_locked(tmp)  # locked from birth: a later session adopts it if we die here
        try:
            _write_all(fd, b"".join(_line(i) for i in ring))
            os.fsync(fd)
            path = self.root / f"{name}{_SUFFIX}"
            os.replace(tmp, path)  # only now visible to other sessions, and already locked
        except BaseException:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise
        fsync_dir(self.root)
        old = self.path
        self._close()
        if old is not None:
            old.unlink(missing_ok=True)
        self.path, self._fd, self._lines = path, fd, len(ring)

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def orphans(root: Path, ring_size: int, warn: Callable[[str], None] = lambda _m: None) -> list[Orphan]:
    """Ring files (and rewrite temp files) whose process is gone, each locked by us now; live
    sessions' files are skipped."""
    if not root.is_dir():
        return []
    found = []
    paths = sorted([*root.glob(f"*{_SUFFIX}"), *root.glob(f"*{_TEMP_SUFFIX}")])
    for path in paths:
        fd = claim(path)
        if fd is None:
            continue  # its session is running (or another tmg is replaying it, or it is gone)
        try:
            data = read_all(fd)
        except OSError as exc:
            os.close(fd)
            warn(f"memory pending ring {path}: unreadable ({exc}); left in place")
            continue
        items = []
        for raw in data.decode("utf-8", errors="replace").splitlines():
            try:
                item = json.loads(raw)
            except ValueError:
                continue  # a line torn by the crash
            if isinstance(item, dict):
                items.append(item)
        found.append(Orphan(path, items[-ring_size:], fd))
    return found


def _line(item: dict[str, Any]) -> bytes:
    return (json.dumps(item, ensure_ascii=False) + "\n").encode("utf-8")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
