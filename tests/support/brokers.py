"""Tests start real brokers (detached, by design): these find and stop the ones a test started,
so that no broker outlives its test (each is identified by its runtime folder under the test's
own tmp folder, never by name alone)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def brokers_under(root: Path) -> list[int]:
    """Pids of `python -m tmg.broker --dir D` processes whose D lies under `root`."""
    root = root.resolve()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"tmg.broker" not in argv or b"--dir" not in argv:
            continue
        folder = Path(os.fsdecode(argv[argv.index(b"--dir") + 1]))
        if folder.resolve().is_relative_to(root):
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return not _alive(pid)


def stop_brokers_under(root: Path) -> None:
    """SIGTERM (the broker stops its servers), then SIGKILL what is left."""
    pids = brokers_under(root)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for pid in pids:
        if not wait_gone(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
