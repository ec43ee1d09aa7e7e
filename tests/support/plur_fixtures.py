"""The real PLUR's entry point as a fixture, for the suites that start it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.plur_server import PlurUnavailable, real_plur_entry


@pytest.fixture(scope="session")  # the install check runs once per run
def plur_entry() -> Path:
    """The pinned real PLUR's entry point (installed on first use); node missing is the only skip."""
    try:
        return real_plur_entry()
    except PlurUnavailable as exc:
        pytest.skip(f"real PLUR server unavailable: {exc}")
