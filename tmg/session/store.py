"""Where sessions live: ``TMG_HOME/sessions/<mode>/<id>/``, each locked by the one tmg that writes it.

A session belongs to a mode and a project (tmg.project.project_root: the git root, else the working
folder): its folder holds a ``project`` file naming the project's root, and each project has its own
current session, ``sessions/<mode>/current-<key>`` (the key a hash of the root), so a run in
another project never continues this one's conversation. A TMG_HOME from before projects has one
``current`` per mode and sessions without a ``project`` file: they stay listed and found by id
(``tmg -t ID``, ``--resume ID``, which adopts one into the project it is resumed in), but no
project continues one on its own (tmg.session.choice says so once).

TMG_HOME holds the user's own record (history, transcripts, memory's spool): its folders are
created 0700 and its files 0600, and a home an older tmg left open is tightened when a store
opens it (`tmg.private_files`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tmg.config.mode import MODE_PATTERN
from tmg.errors import SessionBusyError, TmgError, UsageError
from tmg.private_files import FILE_MODE, private_dirs, tighten

_SAFE_MODE = re.compile(rf"^{MODE_PATTERN}$")
PROJECT_FILE = "project"  # in a session's folder: the root of the project it belongs to
LEGACY_POINTER = "current"  # one per mode, before sessions belonged to projects


def new_session_id() -> str:
    """`YYYYmmdd-HHMMSS-xxxx`: ids sort in the order they were made, within a second too (three
    hex digits of its fraction, then a random one), so "the first session" is the first by name."""
    import secrets  # only when a session is created: `tmg -t` never needs it

    now = time.time()
    fraction = int((now % 1) * 4096)
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + f"-{fraction:03x}{secrets.randbelow(16):x}"


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

    def outline(self) -> tuple[int, str]:
        """``(messages, the first prompt's start)`` for a listing, read from its history's lines."""
        import json

        count, first = 0, ""
        try:
            with self.history_path.open("rb") as f:
                for line in f:
                    count += 1
                    if not first and b'"role":"user"' in line:
                        try:
                            first = str(json.loads(line).get("content", ""))[:60].replace("\n", " ")
                        except ValueError:
                            pass
        except OSError:
            pass
        return count, first

    def last_active(self) -> float:
        """When it was last written (its history, else its folder): what "most recent" means."""
        for path in (self.history_path, self.dir):
            try:
                return path.stat().st_mtime
            except OSError:
                continue
        return 0.0


def project_key(project: Path) -> str:
    """The name part of a project's pointer file: stable for one root, no path in a file name."""
    return hashlib.sha256(str(project).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def unwritable(root: Path, exc: OSError) -> TmgError:
    return TmgError(f"cannot keep sessions in {root} ({exc.strerror or exc}); "
                    "set TMG_HOME to a folder you can write to")


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

    def _pointed(self, mode: str, pointer: Path) -> SessionRef | None:
        try:
            sid = pointer.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        ref = SessionRef(mode, sid, self._mode_dir(mode) / sid)
        return ref if sid and _SAFE_MODE.match(sid) and ref.dir.is_dir() else None

    def current(self, mode: str, project: Path) -> SessionRef | None:
        """The current session of ``mode`` in ``project``, if it has one."""
        return self._pointed(mode, self._mode_dir(mode) / f"current-{project_key(project)}")

    def make_current(self, ref: SessionRef, project: Path) -> None:
        """Make ``ref`` the session ``project`` continues (its pointer replaced atomically)."""
        pointer = self._mode_dir(ref.mode) / f"current-{project_key(project)}"
        tmp = pointer.with_name(pointer.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(ref.id + "\n")
        os.replace(tmp, pointer)

    def start_new(self, mode: str, project: Path) -> SessionRef:
        """Create a session of ``project`` and make it its current one (the old one stays listed)."""
        ref = self.start_side(mode, project)
        try:
            self.make_current(ref, project)
        except OSError as exc:
            raise unwritable(self.root, exc) from exc
        return ref

    def start_side(self, mode: str, project: Path) -> SessionRef:
        """Create a session of ``project`` beside its current one, which stays current: for a
        run that finds the current session open in another tmg."""
        sid = new_session_id()
        while (self._mode_dir(mode) / sid).exists():  # made in the same quarter millisecond
            sid = new_session_id()
        ref = SessionRef(mode, sid, self._mode_dir(mode) / sid)
        try:
            private_dirs(ref.dir)
            self.set_project(ref, project)
        except OSError as exc:
            raise unwritable(self.root, exc) from exc
        return ref

    def resume_or_start(self, mode: str, project: Path, new: bool = False) -> SessionRef:
        try:
            return (None if new else self.current(mode, project)) or self.start_new(mode, project)
        except OSError as exc:
            raise unwritable(self.root, exc) from exc

    # -- which project a session belongs to ------------------------------------------------

    def project_of(self, ref: SessionRef) -> Path | None:
        """The root of the project ``ref`` belongs to; None for a session from before projects."""
        try:
            text = (ref.dir / PROJECT_FILE).read_text(encoding="utf-8", errors="surrogateescape").strip()
        except OSError:
            return None
        return Path(text) if text else None

    def set_project(self, ref: SessionRef, project: Path) -> None:
        fd = os.open(ref.dir / PROJECT_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(f"{project}\n")

    def of_project(self, mode: str, project: Path) -> list[SessionRef]:
        """The sessions of ``mode`` in ``project``, the most recently active first."""
        mode_dir = self._mode_dir(mode)
        if not mode_dir.is_dir():
            return []
        refs = [SessionRef(mode, p.name, p) for p in mode_dir.iterdir() if p.is_dir()]
        return sorted((r for r in refs if self.project_of(r) == project), key=SessionRef.last_active, reverse=True)

    def currents(self, mode: str) -> set[str]:
        """The ids of the sessions some project of ``mode`` continues."""
        mode_dir = self._mode_dir(mode)
        pointers = mode_dir.glob("current-*") if mode_dir.is_dir() else ()
        return {ref.id for p in pointers if not p.name.endswith(".tmp") and (ref := self._pointed(mode, p))}

    def legacy_current(self, mode: str) -> SessionRef | None:
        """The mode's one current session of a TMG_HOME from before projects, if it is one still."""
        ref = self._pointed(mode, self._mode_dir(mode) / LEGACY_POINTER)
        return ref if ref is not None and self.project_of(ref) is None else None

    def retire_legacy(self, mode: str) -> None:
        """Stop pointing at the mode's legacy current session (it stays listed and found by id)."""
        pointer = self._mode_dir(mode) / LEGACY_POINTER
        try:
            os.replace(pointer, pointer.with_name(LEGACY_POINTER + ".before-projects"))
        except OSError:
            pass

    # -- finding and listing ---------------------------------------------------------------

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
                import asyncio  # here: `tmg -t` reads the store and must not import asyncio (P1)

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


async def lock_session(store: SessionStore, ref: SessionRef, project: Path, interactive: bool,
                       notice: Callable[[str], None], side_ok: bool = True) -> SessionLock:
    """The session's lock; for a run that finds it held, a side session's (said in one line).

    A run waits a moment for a one-shot to finish, not for an open chat (it will not end soon);
    then it goes to a side session of the same mode and project, which it holds alone: a chat
    open in another terminal must not make a one-shot fail, nor stop a second chat from starting,
    and the two never write the same files. ``side_ok`` False (``tmg compact``, which works on
    the current session itself): a held session is an error.
    """
    lock = SessionLock(ref, kind=INTERACTIVE if interactive else "oneshot")
    if lock.holder_kind() == INTERACTIVE:
        lock.wait = 0.0
    try:
        await lock.acquire()
        return lock
    except SessionBusyError:
        if not side_ok:
            raise
    side = SessionLock(store.start_side(ref.mode, project), kind=lock.kind)
    await side.acquire()
    what = "this chat goes on in" if interactive else "this answer goes to"
    notice(f"session {ref.id} is open in another tmg; {what} a side session {side.ref.id} (tmg -t {side.ref.id})")
    return side
