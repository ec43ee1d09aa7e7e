"""A session's checkpoints: ``<session>/checkpoints/``, beside its history, never the user's own `.git`.

``log.jsonl`` is append-only, one record a line, each naming its prompt by the ``ts`` (and index)
of the prompt's user message in the history:

    {"k": "file", "p": TS, "at": I, "path": P, "existed": true, "before": SHA, "mode": 420}
    {"k": "file", ..., "existed": true, "before": null, "why": "12,000,000 bytes, over ..."}
    {"k": "after", "p": TS, "at": I, "path": P, "sha": SHA}      (what it left; null: no file)
    {"k": "shell", "p": TS, "at": I, "command": "make install"}
    {"k": "memory", "p": TS, "at": I, "kind": "learn", "id": "ENG-...", "text": "..."}
    {"k": "rewound", "prompts": [{"p": TS, "text": "..."}, ...]}

``blobs/<sha256>`` holds each kept content once (0600, like everything under TMG_HOME). A file is
kept before the first change a prompt makes to it; one over MAX_KEPT_BYTES is not copied (a
rewind says it cannot restore it), nor one that cannot be read.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tmg.checkpoints import CHECKPOINTS_DIR, LOG_FILE
from tmg.private_files import private_dirs, private_opener

BLOBS_DIR = "blobs"
MAX_KEPT_BYTES = 10_000_000  # a bigger file is changed without a copy: a rewind cannot restore it


@dataclass(frozen=True)
class PromptKey:
    """A prompt of the session: its user message's index in the history and ``ts``."""

    at: int
    ts: float


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class CheckpointLog:
    def __init__(self, session_dir: Path, warn: Callable[[str], None] = lambda _m: None) -> None:
        self.dir = session_dir / CHECKPOINTS_DIR
        self._warn = warn
        self._file = None
        # Copies are made on a thread (the file tools') while a memory write may land on the loop.
        self._lock = threading.Lock()
        self._kept: set[tuple[float, str]] = set()  # (prompt, path) kept in this process
        self.prompts: dict[int, PromptKey] = {}  # the engine's prompt id -> its key (memory writes)

    # -- writing -------------------------------------------------------------------------

    def keep(self, prompt: PromptKey, path: Path) -> str | None:
        """Keep ``path`` as it is before ``prompt`` first changes it. Returns why it could not be
        kept (too big, unreadable), for the user; None when it was (or already had been)."""
        key = (prompt.ts, str(path))
        if key in self._kept:
            return None
        self._kept.add(key)
        record: dict[str, Any] = {"k": "file", "path": str(path), "existed": path.exists()}
        why = None
        if record["existed"]:
            try:
                st = path.stat()
                if st.st_size > MAX_KEPT_BYTES:
                    why = f"{st.st_size:,} bytes, over the {MAX_KEPT_BYTES:,} a checkpoint keeps"
                else:
                    data = path.read_bytes()
                    record.update(before=self._blob(data), mode=st.st_mode & 0o7777)
            except OSError as exc:
                why = f"it could not be copied ({exc.strerror or exc})"
            if why:
                record.update(before=None, why=why)
        self._append(prompt, record)
        return f"{path} is not kept for a rewind: {why}" if why else None

    def left(self, prompt: PromptKey, path: Path) -> None:
        """What ``prompt`` left ``path`` as, after a change: a rewind compares the file with it
        then, and shows the difference (kept like a copy, within the same bound)."""
        try:
            if not path.is_file():
                sha = None
            elif path.stat().st_size > MAX_KEPT_BYTES:
                sha = digest(path.read_bytes())
            else:
                sha = self._blob(path.read_bytes())
        except OSError:
            return
        self._append(prompt, {"k": "after", "path": str(path), "sha": sha})

    def ran(self, prompt: PromptKey, command: str) -> None:
        self._append(prompt, {"k": "shell", "command": command})

    def wrote_memory(self, prompt: PromptKey, kind: str, memory_id: str, text: str) -> None:
        self._append(prompt, {"k": "memory", "kind": kind, "id": memory_id, "text": text[:500]})

    def rewound(self, prompts: list[dict[str, Any]]) -> None:
        self._append(None, {"k": "rewound", "prompts": prompts})

    def _append(self, prompt: PromptKey | None, record: dict[str, Any]) -> None:
        if prompt is not None:
            record = {**record, "p": prompt.ts, "at": prompt.at}
        try:
            with self._lock:
                self._write(record)
        except OSError as exc:
            self._warn(f"checkpoint not recorded in {self.dir} ({exc.strerror or exc}); a rewind may not restore it")

    def _write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            private_dirs(self.dir)
            self._file = open(self.dir / LOG_FILE, "a", encoding="utf-8", opener=private_opener)
        self._file.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())  # a checkpoint is kept before the change it guards

    def _blob(self, data: bytes) -> str:
        sha = digest(data)
        path = self.dir / BLOBS_DIR / sha
        if not path.exists():
            private_dirs(path.parent)
            tmp = path.with_suffix(".tmp")
            with open(tmp, "wb", opener=private_opener) as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        return sha

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    # -- reading -------------------------------------------------------------------------

    def records(self) -> list[dict[str, Any]]:
        """Every record, oldest first; a torn or malformed line is skipped."""
        try:
            lines = (self.dir / LOG_FILE).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "k" in record:
                out.append(record)
        return out

    def blob(self, sha: str) -> bytes:
        return (self.dir / BLOBS_DIR / sha).read_bytes()
