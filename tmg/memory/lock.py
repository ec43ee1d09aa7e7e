"""`WriteLock`: the short advisory lock writes take against another tmg on the same store.

`~/.plur/.tmg-write.lock` (memory.md §4). PLUR locks its own files; this lock only keeps two
tmg processes from interleaving learns of the same statement. It is advisory and bounded: after
`wait` seconds, or if the file cannot be opened, the write proceeds unlocked (a duplicate is
harmless, a lost write is not).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from tmg.private_files import FILE_MODE, private_dirs

DEFAULT_WAIT_S = 0.5
_POLL_S = 0.02


def default_lock_path() -> Path:
    return Path.home() / ".plur" / ".tmg-write.lock"


class WriteLock:
    """An flock on one file, acquired by polling (never blocks the event loop)."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        wait: float = DEFAULT_WAIT_S,
        debug: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.path = path or default_lock_path()
        self.wait = wait
        self._debug = debug

    @asynccontextmanager
    async def held(self) -> AsyncIterator[bool]:
        """Hold the lock for a block; yields whether it was really taken."""
        fd = self._open()
        locked = fd is not None and await self._acquire(fd)
        try:
            yield locked
        finally:
            if fd is not None:
                if locked:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def _open(self) -> int | None:
        try:
            private_dirs(self.path.parent)  # PLUR's store folder, when tmg is first to make it
            return os.open(self.path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        except OSError as exc:
            self._debug(f"memory write lock {self.path} unavailable ({exc.strerror}); writing unlocked")
            return None

    async def _acquire(self, fd: int) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if loop.time() >= deadline:
                    self._debug(f"memory write lock {self.path} busy for {self.wait:g} s; writing unlocked")
                    return False
                await asyncio.sleep(_POLL_S)
            except OSError as exc:
                self._debug(f"memory write lock {self.path}: {exc.strerror}; writing unlocked")
                return False
