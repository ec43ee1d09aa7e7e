"""What the model has read this session: an edit is made only against the file it has seen.

A read records the file's state (mtime, size, content hash); an edit of a file never read, or
changed since (by the user, a formatter, another tool), is refused and the model told to read it
again. A write by the model records the new state: it knows what it wrote.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FileState:
    mtime_ns: int
    size: int
    digest: str


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def state_of(path: Path, data: bytes | None = None) -> FileState:
    """The file's state now; ``data`` is its whole content when the caller already has it."""
    st = path.stat()
    if data is None:
        h = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        digest = h.hexdigest()
    else:
        digest = digest_of(data)
    return FileState(st.st_mtime_ns, st.st_size, digest)


class ReadLedger:
    """One session's record of the files the model has read (or written), by resolved path."""

    def __init__(self) -> None:
        self._seen: dict[Path, FileState] = {}

    def record(self, path: Path, state: FileState) -> None:
        self._seen[path] = state

    def stale_reason(self, path: Path, data: bytes) -> str | None:
        """Why an edit of ``path`` (whose content now is ``data``) must wait for a fresh read,
        or None when the model has seen exactly this content."""
        seen = self._seen.get(path)
        if seen is None:
            return f"{path.name} has not been read in this session; read it with read_file first"
        # The content decides: a touch that keeps it is no change; a same-size rewrite within
        # the clock's granularity is one.
        if len(data) == seen.size and digest_of(data) == seen.digest:
            return None
        return f"{path.name} changed since it was last read; read it again with read_file before editing"
