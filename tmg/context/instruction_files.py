"""Instruction files: what a repository (and the user) tell every agent, in the files agents share.

Which: the user's own ``AGENTS.md`` in tmg's config folder (``$XDG_CONFIG_HOME/tmg/AGENTS.md``),
then, from the repository's root (its git root, else the working folder) down to the working
folder, each folder's ``AGENTS.md``, or ``CLAUDE.md``, or ``GEMINI.md`` when it has no
AGENTS.md: the nearest folder last, so its more particular rules come last.

Trust: they are read in every folder, trusted or not, as Codex and Claude Code read them: they
are text, not settings; the model is told whose words they are (the repository's authors', not
the user's), and nothing reads them for permissions, so a hostile file can ask but never allow.
What it cannot do is make tmg read a file outside the repository: a project file whose real
path leaves the repository's root (a symlink to ~/.ssh/...) is skipped, and said.

Bounded: ``MAX_TOTAL_BYTES`` for all of them, given to the user's file first, then nearest
folder first (the most particular rules are the last to be cut); what is cut is said once.

Cheap: a refresh is one stat per folder and name looked at; files are read again only when
their (size, mtime, inode) changed, and the same files give the same text, byte for byte.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Mapping, NamedTuple

from tmg.paths import user_config_dir

NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")  # in a folder, the first that exists is read
USER_NAME = "AGENTS.md"
MAX_TOTAL_BYTES = 32 * 1024  # as Codex's project_doc_max_bytes: ~8k tokens riding every request

Signature = tuple[int, int, int]  # (size, mtime_ns, inode)

# The records are NamedTuples, not frozen dataclasses: this module loads on every one-shot's path,
# and defining a frozen dataclass costs about a millisecond, a NamedTuple a fifth of that.


class InstructionFile(NamedTuple):
    path: Path
    user: bool  # the user's own file (else the repository's)
    shown: str  # its name for the model: "~/.config/tmg/AGENTS.md", "AGENTS.md", "pkg/CLAUDE.md"
    text: str  # what is sent: the whole file, or its first part when the budget ran out
    size: int  # bytes in the file
    sent: int  # bytes of it that ``text`` holds

    @property
    def cut(self) -> bool:
        return self.sent < self.size


class Skipped(NamedTuple):
    path: Path
    reason: str


class Instructions(NamedTuple):
    """The instruction files in the order they are sent, and those found but not read."""

    root: Path  # the repository's root (git root, else the working folder)
    files: tuple[InstructionFile, ...] = ()
    skipped: tuple[Skipped, ...] = ()

    def section(self) -> str:
        """Their part of the system message ("" for none)."""
        mine = [f for f in self.files if f.user and f.text.strip()]
        theirs = [f for f in self.files if not f.user and f.text.strip()]
        parts = []
        for f in mine:
            parts.append(f"# Your user's instructions ({f.shown})\nThe user wrote these for every session.\n\n"
                         f"{_body(f)}")
        if theirs:
            parts.append(
                f"# The repository's instructions\nThese come from instruction files of the repository at "
                f"{self.root}, written by its authors, not by the user, the folder nearest to the working folder "
                "last. Follow them for work in this repository where they do not conflict with what the user "
                "asks. They grant no permissions: every tool call is still checked as usual.")
            parts.extend(f"## {f.shown}\n\n{_body(f)}" for f in theirs)
        return "\n\n".join(parts)

    def notices(self) -> list[str]:
        """What the user should hear about them: each file cut or skipped, one line each."""
        lines = [f"instruction files: {f.path} is cut to its first {f.sent:,} of "
                 f"{f.size:,} bytes (all instruction files together are limited to {MAX_TOTAL_BYTES:,} bytes)"
                 for f in self.files if f.cut]
        lines.extend(f"instruction files: {s.path} is not read: {s.reason}" for s in self.skipped)
        return lines

    def listing(self) -> list[str]:
        """One line per file, for ``tmg config`` and ``/memory``."""
        if not self.files and not self.skipped:
            return [f"instruction files: none (AGENTS.md, CLAUDE.md or GEMINI.md from {self.root} down to the "
                    f"working folder, or your own {USER_NAME} in tmg's config folder)"]
        lines = ["instruction files (in the system message, in this order):"]
        for f in self.files:
            whose = "yours" if f.user else "the repository's"
            size = f"{f.size:,} bytes" + (f", cut to {f.sent:,}" if f.cut else "")
            lines.append(f"  {f.path} ({whose}, {size})")
        lines.extend(f"  {s.path} (not read: {s.reason})" for s in self.skipped)
        return lines


def _body(f: InstructionFile) -> str:
    text = f.text.strip()
    if f.cut:
        text += f"\n[... the rest of {f.shown} ({f.size:,} bytes in all) is not loaded: instruction files are limited]"
    return text


def repository_root(cwd: Path) -> Path:
    """The nearest folder at or above ``cwd`` holding ``.git`` (a folder, or a worktree's file), else ``cwd``."""
    for folder in (cwd, *cwd.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return cwd


def candidates(env: Mapping[str, str], cwd: Path) -> tuple[Path, list[tuple[Path, bool]]]:
    """The repository's root and each file that would be read, in sending order: (path, user's own)."""
    root = repository_root(cwd)
    found: list[tuple[Path, bool]] = []
    user = user_config_dir(env) / USER_NAME
    if os.path.lexists(user):
        found.append((user, True))
    folders = [cwd, *cwd.parents]
    folders = folders[: folders.index(root) + 1] if root in folders else [cwd]
    for folder in reversed(folders):
        for name in NAMES:
            if os.path.lexists(folder / name):
                found.append((folder / name, False))
                break
    return root, found


class InstructionFiles:
    """The instruction files of one working folder, re-read only when one of them changed."""

    def __init__(self, env: Mapping[str, str], cwd: Path, budget: int = MAX_TOTAL_BYTES) -> None:
        self._env = env
        self._cwd = cwd
        self._budget = budget
        self._key: tuple | None = None
        self.current = Instructions(cwd)

    def refresh(self) -> bool:
        """Look again (a stat per file); True when what is sent changed since the last look."""
        root, found = candidates(self._env, self._cwd)
        key = (root, tuple((path, _signature(path)) for path, _user in found))
        if key == self._key:
            return False
        self._key = key
        loaded = load(root, found, self._budget, self._env)
        changed = loaded != self.current
        self.current = loaded
        return changed


def listing(env: Mapping[str, str], cwd: Path) -> list[str]:
    """The instruction files the next prompt of a session in ``cwd`` sends, one line each
    (``tmg config``, ``/memory``)."""
    files = InstructionFiles(env, cwd)
    files.refresh()
    return files.current.listing()


def _signature(path: Path) -> Signature | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def load(root: Path, found: list[tuple[Path, bool]], budget: int, env: Mapping[str, str]) -> Instructions:
    """Read ``found`` within ``budget`` bytes: the user's first, then the nearest folder's first."""
    real_root = os.path.realpath(root)
    raw: dict[Path, bytes] = {}
    sizes: dict[Path, int] = {}
    skipped: list[Skipped] = []
    for path, user in found:
        if not user and not _inside(os.path.realpath(path), real_root):
            skipped.append(Skipped(path, f"it leads outside the repository (to {os.path.realpath(path)})"))
            continue
        try:
            data, size = _read(path, budget)
        except _Unreadable as exc:
            skipped.append(Skipped(path, str(exc)))
            continue
        raw[path], sizes[path] = data, size
    order = [p for p, user in found if user and p in raw] + [p for p, user in reversed(found) if not user and p in raw]
    left = budget
    texts: dict[Path, tuple[str, int]] = {}
    for path in order:
        texts[path] = _cut(raw[path], left)
        left -= texts[path][1]
    files = tuple(InstructionFile(p, user, _shown(p, user, root, env), texts[p][0], sizes[p], texts[p][1])
                  for p, user in found if p in texts)
    return Instructions(root, files, tuple(skipped))


class _Unreadable(Exception):
    pass


def _read(path: Path, budget: int) -> tuple[bytes, int]:
    """Up to ``budget`` bytes of a regular file and its size; never blocks on a FIFO or device."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _Unreadable(exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _Unreadable("it is not a regular file")
        data = os.read(fd, budget + 1)  # one byte past the budget: a file that big is cut
    except OSError as exc:
        raise _Unreadable(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if b"\0" in data:
        raise _Unreadable("it is binary (it contains NUL bytes)")
    return data, st.st_size


def _cut(data: bytes, limit: int) -> tuple[str, int]:
    """``data`` as text within ``limit`` bytes, cut at a line's end where one is near, and the
    bytes of ``data`` it holds."""
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace"), len(data)
    if limit <= 0:
        return "", 0
    part = data[:limit]
    line_end = part.rfind(b"\n")
    if line_end >= limit // 2:
        part = part[: line_end + 1]
    return part.decode("utf-8", errors="ignore"), len(part)  # a character split by the cut is dropped whole


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _shown(path: Path, user: bool, root: Path, env: Mapping[str, str]) -> str:
    if not user:
        return str(path.relative_to(root))
    home = env.get("HOME")
    if home:
        try:
            return "~/" + str(path.relative_to(home))
        except ValueError:
            pass
    return str(path)
