"""PLUR's own file lock, held by tmg when it edits a file PLUR reads (episodes.yaml, a
repository's team store): `<file>.lock`, created exclusively and holding `<host>:<pid>:<ms>:<n>`
(PLUR's `withLock`: a writer that finds it held by a live process waits and retries; one held
by a dead process is taken over, as PLUR does).
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_WAIT_S = 2.0
_POLL_S = 0.05
# PLUR's own rule for a lock whose holder cannot be checked (another host): stale after 60 s.
_STALE_S = 60.0
_UNSAFE = re.compile(r"[^\w.-]")


class StoreBusy(Exception):
    """Another process held the lock for the whole wait; the message says which, for the user."""


@contextmanager
def plur_lock(path: Path, wait: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold PLUR's own lock on `path` (`<path>.lock`, its `withLock` protocol) for a block.

    Raises:
        StoreBusy: another process held it for `wait` seconds.
    """
    lock = path.with_name(path.name + ".lock")
    token = f"{socket.gethostname()}:{os.getpid()}:{int(time.time() * 1000)}:0"
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            holder = _holder(lock)
            if holder is not None and _stale(lock, holder):
                _take_over(lock, holder, token)
                continue
            if time.monotonic() >= deadline:
                pid = holder.split(":")[1] if holder and holder.count(":") >= 1 else "?"
                raise StoreBusy(f"{path.name} is being written by process {pid}; try again in a moment") from None
            time.sleep(_POLL_S)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(token)
        break
    try:
        yield
    finally:
        if _holder(lock) == token:
            lock.unlink(missing_ok=True)


def _holder(lock: Path) -> str | None:
    try:
        return lock.read_text(encoding="utf-8").strip()
    except OSError:
        return None  # released meanwhile


def _stale(lock: Path, holder: str) -> bool:
    """PLUR's `holderIsAlive`: a holder on this host whose process is gone; one on another host
    (or unreadable) only past 60 s."""
    parts = holder.split(":")
    if len(parts) >= 2 and parts[0] == socket.gethostname() and parts[1].isdigit() and int(parts[1]) > 0:
        try:
            os.kill(int(parts[1]), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    try:
        return time.time() - lock.stat().st_mtime > _STALE_S
    except OSError:
        return False


def _take_over(lock: Path, holder: str, token: str) -> None:
    """PLUR's `stealLockSync`: claim the stale lock by renaming it, and drop it only if it still
    holds what we judged stale (a live writer that took it meanwhile gets it back)."""
    claim = lock.with_name(f"{lock.name}.steal.{_UNSAFE.sub('_', token)}")
    try:
        os.rename(lock, claim)
    except OSError:
        return
    try:
        current = claim.read_text(encoding="utf-8").strip()
        if current != holder:
            try:
                fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(current)
            except OSError:
                pass
    finally:
        claim.unlink(missing_ok=True)
