"""What a session has learned, kept with the session (its folder), so `MAX_LEARNS_PER_SESSION`
holds across processes: one-shots that continue one session share one count (memory.md §4).

The cap is for what a session adds to the store from the user's words: each distinct statement
written (sent, or spooled to be sent) counts once; the same statement again, in this process or
a later one, counts for nothing and is not written again. The file holds one short hash per
statement (`memory-learned` in the session folder): the words themselves are already in the
session's history, and need not be copied. Appending a line is O(1); the file is read once per
process, at the session's first learn.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

FILE_NAME = "memory-learned"


def _key(statement: str) -> str:
    import hashlib  # at the session's first learn, not at every start

    return hashlib.sha256(" ".join(statement.casefold().split()).encode()).hexdigest()[:16]


class LearnLedger:
    """The statements one session learned; in memory only when it has no folder."""

    def __init__(self, folder: Path | None, debug: Callable[[str], None] = lambda _m: None) -> None:
        self._path = folder / FILE_NAME if folder is not None else None
        self._debug = debug
        self._keys: set[str] | None = None

    def _loaded(self) -> set[str]:
        if self._keys is None:
            self._keys = set()
            if self._path is not None:
                try:
                    self._keys = set(self._path.read_text(encoding="ascii", errors="ignore").split())
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    self._debug(f"memory: {self._path} could not be read ({exc}); counting learns from 0")
        return self._keys

    @property
    def count(self) -> int:
        return len(self._loaded())

    def __contains__(self, statement: str) -> bool:
        return _key(statement) in self._loaded()

    def discard(self, statement: str) -> None:
        """A rewind retracted ``statement``: it no longer counts, and taught again it is learned
        again. Rare, so the file is rewritten whole (a few short lines)."""
        keys = self._loaded()
        key = _key(statement)
        if key not in keys:
            return
        keys.discard(key)
        if self._path is None:
            return
        from tmg.atomic_file import replace_file

        try:
            replace_file(self._path, "".join(k + "\n" for k in sorted(keys)).encode("ascii"))
        except OSError as exc:
            self._debug(f"memory: {self._path} could not be rewritten ({exc}); the retracted learn still counts")

    def add(self, statement: str) -> None:
        key = _key(statement)
        keys = self._loaded()
        if key in keys:
            return
        keys.add(key)
        if self._path is None:
            return
        try:
            fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (key + "\n").encode("ascii"))
            finally:
                os.close(fd)
        except OSError as exc:
            self._debug(f"memory: {self._path} could not be written ({exc}); this learn counts in this process only")
