"""Files only their owner can read: what tmg keeps for the user (TMG_HOME: sessions, history,
transcripts, the memory spool and pending rings, logs, the broker's files; PLUR's store) is
created 0600 in folders created 0700, and a tree an older tmg (or another tool) left open is
tightened once, the first time tmg opens it.

tmg's own umask is left alone: it also writes files for the user (the edit tool) and spawns the
user's commands, which must get the modes the user expects. Only the processes that write private
stores alone (the memory server, the memory broker) are started with PRIVATE_UMASK.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
FILE_MODE = 0o600
DIR_MODE = 0o700
_OPEN_TO_OTHERS = 0o077


def private_dirs(path: Path) -> Path:
    """`path` as a folder, each missing part of it created 0700 (existing ones are left as they are).

    Raises:
        OSError: a part could not be created.
    """
    missing = []
    part = path
    while not part.is_dir():
        missing.append(part)
        if part.parent == part:
            break
        part = part.parent
    for part in reversed(missing):
        try:
            os.mkdir(part, DIR_MODE)
        except FileExistsError:
            if not part.is_dir():
                raise
    return path


def private_opener(path: str | os.PathLike[str], flags: int) -> int:
    """An `opener` for `open()`: a file it creates is 0600 from its first byte."""
    return os.open(path, flags, FILE_MODE)


def tighten(root: Path) -> int:
    """Take the group and other bits off `root` and everything in it (never following a link,
    never touching what another user owns); returns how many entries changed.

    Done once: a root that is already closed to others (or missing, or not ours) costs one
    `lstat` and is not walked. tmg creates everything inside such a root 0600/0700, and while the
    root is 0700 nothing inside can be reached by others anyway. The root is tightened last, so a
    walk cut short is done again next time.
    """
    root = Path(os.path.realpath(root))  # a home that is a link: its folder is the one to close
    try:
        info = os.lstat(root)
    except OSError:
        return 0
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or not info.st_mode & _OPEN_TO_OTHERS:
        return 0
    changed = 0
    for folder, dirs, files in os.walk(root, onerror=lambda _exc: None):
        for name in (*dirs, *files):
            changed += _tighten_one(os.path.join(folder, name))
    return changed + _tighten_one(str(root))


def _tighten_one(path: str) -> int:
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid() or not info.st_mode & _OPEN_TO_OTHERS:
            return 0
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~_OPEN_TO_OTHERS)
    except OSError:
        return 0  # gone meanwhile, or not ours to change: the next open tries again
    return 1


def current_umask() -> int:
    """The process's umask (read from /proc, else set and put back: it can only be narrowed
    for that moment, never widened)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(PRIVATE_UMASK)
    os.umask(mask)
    return mask
