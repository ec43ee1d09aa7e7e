"""A server's stderr log under TMG_HOME, kept bounded: past a size, one previous generation is
kept and a new file begun (servers write there for as long as they run; nobody trims it)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

LOG_BYTES = 1_000_000


def rotate(path: Path, limit: int = LOG_BYTES) -> None:
    """Keep one previous generation of a log that grew past `limit` bytes."""
    with contextlib.suppress(OSError):
        if path.stat().st_size > limit:
            os.replace(path, path.with_name(path.name + ".1"))
