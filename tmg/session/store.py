"""Where sessions live: ``TMG_HOME/sessions/<mode>/<id>/``, one current session per mode, each locked
by the one tmg that writes it.

TMG_HOME holds the user's own record (history, transcripts, memory's spool): its folders are
created 0700 and its files 0600, and a home an older tmg left open is tightened when a store
opens it (`tmg.private_files`).
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tmg.config.model import MODE_PATTERN
from tmg.errors import SessionBusyError, TmgError, UsageError
from tmg.private_files import FILE_MODE, private_dirs, tighten

_SAFE_MODE = re.compile(rf"^{MODE_PATTERN}$")


def new_session_id() -> str:
    import secrets  # only when a session is created: `tmg -t` never needs it

    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


@dataclass(frozen=True)
class SessionRef:
    """A session's identity and folder; the files inside are opened by their owners."""

    mode: str
    id: str
    dir: Path

    @property
    def history_path(self) -> Path:
        return self.dir / "history.jsonl"

    @property
    def transcript_path(self) -> Path:
        return self.dir / "transcript.md"


class SessionStore:
    """Finds, creates and locks sessions under one TMG_HOME."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.root = home / "sessions"
        tighten(home)  # one lstat when it is already private

    def _mode_dir(self, mode: str) -> Path:
        if not _SAFE_MODE.match(mode):
            raise UsageError(f"mode name {mode!r} is not usable; use letters, digits, '.', '_' or '-'")
        return self.root / mode

    def current(self, mode: str) -> SessionRef | None:
        """The mode's current session, if it has one."""
        pointer = self._mode_dir(mode) / "current"
        try:
            sid = pointer.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        ref = SessionRef(mode, sid, self._mode_dir(mode) / sid)
        return ref if sid and ref.dir.is_dir() else None

    def start_new(self, mode: str) -> SessionRef:
        """Create a session and make it the mode's current one (the old one stays listed)."""
        ref = self.start_side(mode)
        pointer = self._mode_dir(mode) / "current"
        tmp = pointer.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(ref.id + "\n")
        os.replace(tmp, pointer)
        return ref

    def start_side(self, mode: str) -> SessionRef:
        """Create a session beside the mode's current one, which stays current: for a one-shot
        that finds the current session open in another tmg."""
        sid = new_session_id()
        ref = SessionRef(mode, sid, self._mode_dir(mode) / sid)
        try:
            private_dirs(ref.dir)
        except OSError as exc:
            raise TmgError(f"cannot keep sessions in {self.root} ({exc.strerror or exc}); "
                           "set TMG_HOME to a folder you can write to") from exc
        return ref

    def resume_or_start(self, mode: str, new: bool = False) -> SessionRef:
        try:
            return (None if new else self.current(mode)) or self.start_new(mode)
        except OSError as exc:
            raise TmgError(
                f"cannot keep sessions in {self.root} ({exc.strerror or exc}); "
                "set TMG_HOME to a folder you can write to"
            ) from exc

    def find(self, session: str, mode: str | None = None) -> SessionRef:
        """A session by id or unique id prefix, in ``mode`` first, then in any mode."""
        if not self.root.is_dir():
            raise UsageError(f"no session {session!r}: there are no sessions yet")
        modes = [mode] if mode else []
        modes += sorted(p.name for p in self.root.iterdir() if p.is_dir() and p.name != mode)
        for m in modes:
            mode_dir = self.root / m
            if not mode_dir.is_dir():
                continue
            hits = sorted(p.name for p in mode_dir.iterdir() if p.is_dir() and p.name.startswith(session))
            if len(hits) == 1:
                return SessionRef(m, hits[0], mode_dir / hits[0])
            if len(hits) > 1:
                raise UsageError(f"session {session!r} is ambiguous in mode {m}: {', '.join(hits[:5])}")
        raise UsageError(f"no session {session!r}; `tmg sessions` lists them")

    def list(self) -> list[SessionRef]:
        """Every session, oldest first within each mode."""
        if not self.root.is_dir():
            return []
        refs = []
        for mode_dir in sorted(p for p in self.root.iterdir() if p.is_dir()):
            for sdir in sorted(p for p in mode_dir.iterdir() if p.is_dir()):
                refs.append(SessionRef(mode_dir.name, sdir.name, sdir))
        return refs


INTERACTIVE = "repl"  # what a REPL writes into its lock file: it holds the session for long
_POLL_S = 0.05  # how often a wait for a held lock tries again


class SessionLock:
    """An exclusive advisory lock on a session, so two processes never interleave writes.

    The lock file names its holder (``PID KIND``), so a one-shot can tell a chat open in another
    terminal (it will not end soon) from another one-shot finishing (worth a short wait).
    """

    def __init__(self, ref: SessionRef, wait: float = 2.0, kind: str = "") -> None:
        self.ref = ref
        self.wait = wait
        self.kind = kind
        self._fd: int | None = None

    def holder_kind(self) -> str:
        """The kind the current holder wrote (``repl``, ``oneshot``, or empty when unknown)."""
        try:
            fields = (self.ref.dir / "lock").read_text(encoding="utf-8").split()
        except OSError:
            return ""
        return fields[1] if len(fields) > 1 else ""

    async def acquire(self) -> None:
        """Take the lock, waiting up to ``wait`` seconds for another tmg to let go of it; the wait
        never blocks the event loop (the REPL's other tasks go on during a /mode).

        Raises:
            SessionBusyError: still held after the wait.
        """
        fd = os.open(self.ref.dir / "lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            deadline = time.monotonic() + self.wait
            while not _locked(fd):
                if time.monotonic() >= deadline:
                    raise SessionBusyError(
                        f"session {self.ref.id} (mode {self.ref.mode}) is in use by another tmg; "
                        "wait for it to finish, or start a separate session with --new")
                await asyncio.sleep(_POLL_S)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {self.kind}\n".encode())
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _locked(fd: int) -> bool:
    """Try once to take the exclusive lock on ``fd``."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


async def lock_session(store: SessionStore, ref: SessionRef, interactive: bool,
                       notice: Callable[[str], None]) -> SessionLock:
    """The session's lock; for a one-shot that finds it held, a side session's (said in one line).

    ``interactive`` (the REPL): a session open in another tmg is an error. A one-shot waits a
    moment for another one-shot to finish, not for an open chat (it will not end soon); then its
    answer goes to a side session of the mode: a chat open in another terminal must not make a
    one-shot fail, and the two never write the same files.
    """
    lock = SessionLock(ref, kind=INTERACTIVE if interactive else "oneshot")
    if not interactive and lock.holder_kind() == INTERACTIVE:
        lock.wait = 0.0
    try:
        await lock.acquire()
        return lock
    except SessionBusyError:
        if interactive:
            raise
    side = SessionLock(store.start_side(ref.mode), kind="oneshot")
    await side.acquire()
    notice(f"session {ref.id} is open in another tmg; this answer goes to a side session "
           f"{side.ref.id} (tmg -t {side.ref.id})")
    return side
