"""Temp files a crash may leave behind, and how a later session tells them from live ones.

Memory's atomic writes (the pending ring, the spool) write a temp file, fsync it, rename it.
A ``kill -9`` between the write and the rename leaves the temp file. Its writer holds an
exclusive ``flock`` on it for as long as it writes (the kernel drops the lock when the process
dies, however it dies), so a later session can claim a temp file whose writer is gone, and
never one that is still being written, without trusting pids or ages.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from tmg.private_files import FILE_MODE


def create_locked(path: Path) -> int:
    """A new file at ``path``, open for writing and locked by us (the caller closes the fd)."""
    while True:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, FILE_MODE)
        try:
            # Blocking: only a recovery scan can hold a brand-new file's lock, and only briefly.
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink:
                return fd
        except BaseException:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        # A scan found it empty before we locked it, took it for a dead writer's and removed
        # it: create it again.
        os.close(fd)


def claim(path: Path) -> int | None:
    """An fd on ``path``, locked by us, when its writer is gone; None while it is being
    written (or when another session claimed and removed it first)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_nlink == 0:
            raise BlockingIOError  # claimed and removed by another tmg meanwhile
    except OSError:
        os.close(fd)
        return None
    return fd


def read_all(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 1 << 16):
        data += chunk
    return data
