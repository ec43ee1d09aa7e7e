"""The sandbox legs need a bubblewrap that works here: skipped without one, which fails under CI=true
(scripts/bootstrap --test installs it)."""

from __future__ import annotations

import pytest

from tmg.tools.sandbox import bubblewrap


def require_bubblewrap() -> str:
    """The bwrap path; skips the test when bubblewrap cannot confine a command on this machine."""
    found = bubblewrap()
    if not found.usable:
        pytest.skip(f"the OS sandbox cannot run here: {found.why}")
    return found.bwrap
