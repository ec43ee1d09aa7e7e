"""Writes a client leaves to the broker when it exits (`tmg/handoff`).

A write tmg sends is on disk first (its write-ahead file in the memory spool), and a later session
replays whatever is still there. PLUR 0.20.0 rewrites a whole YAML file on every write, so at a
year of use a capture takes most of a second, and a one-shot that waited for it would take that
long to exit. Instead, at its end a client names the calls still in flight and each one's
write-ahead file; the broker finishes them after the client has gone and removes each file once
its call landed (a call that failed leaves its file: the next session replays it, as before).

A file is removed only if it looks like what tmg's spool writes: an absolute path to a regular
file (never through a symlink) named `*.json`, directly in a folder named `spool`, owned by the
broker's user. Anything else is refused, so a client cannot have the broker delete other files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

SPOOL_FOLDER = "spool"  # tmg.memory.spool keeps its files in TMG_HOME/memory/spool/


def valid_ahead(path: Any) -> Path | None:
    """`path` as a write-ahead file the broker may remove once its call lands, or None."""
    if not isinstance(path, str) or not os.path.isabs(path):
        return None
    candidate = Path(path)
    if candidate.suffix != ".json" or candidate.parent.name != SPOOL_FOLDER or ".." in candidate.parts:
        return None
    try:
        info = candidate.lstat()
        folder = candidate.parent.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or not stat.S_ISDIR(folder.st_mode):
        return None
    if info.st_uid != os.getuid() or folder.st_uid != os.getuid():
        return None
    return candidate


def landed(result: Any) -> bool:
    """A tools/call result that is not a tool-level error."""
    return isinstance(result, dict) and not result.get("isError")


def remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass  # the client got there first
    except OSError:
        pass  # left for the next session to replay: a duplicate is harmless
