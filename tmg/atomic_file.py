"""Replacing a file whole: the new content goes to a temp file beside it, which is then renamed
over it, so a crash leaves the old content or the new, never half of either. The temp file is
created 0600 (mkstemp): what it holds is never readable by others, not even for a moment.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from tmg.private_files import private_dirs


def replace_file(path: Path, data: bytes, *, mode: int | None = None, durable: bool = False,
                 private_folder: bool = False) -> None:
    """Make `data` the whole content of `path` (its folder created if need be).

    Args:
        mode: the file's permission bits (None: 0600, as the temp file was created).
        durable: fsync the content before the rename (it survives a power loss once this returns).
        private_folder: a missing folder is created 0700 (a file under TMG_HOME), not with the
            user's umask (a file the edit tool writes for the user).
    """
    if private_folder:
        private_dirs(path.parent)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmg", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
