"""Live contract fixtures: the real @plur-ai/mcp (pinned, installed on demand) and fakeplur.

One server per profile per test module (a PLUR start costs about 0.65 s). The only skip is
node/npm being absent; once a server has started, every mismatch is a hard failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.plur_server import (
    PlurUnavailable,
    ServerThread,
    fakeplur_spec,
    real_plur_entry,
    real_plur_spec,
    running,
)



@pytest.fixture(scope="session")
def plur_entry() -> Path:
    try:
        return real_plur_entry()
    except PlurUnavailable as exc:
        pytest.skip(f"real PLUR server unavailable: {exc}")


def _start(spec) -> Iterator[ServerThread]:
    with running(spec) as server:
        yield server


@pytest.fixture(scope="module")
def real_lean(plur_entry: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    yield from _start(real_plur_spec(tmp_path_factory.mktemp("real-lean"), "lean", plur_entry))


@pytest.fixture(scope="module")
def real_full(plur_entry: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    yield from _start(real_plur_spec(tmp_path_factory.mktemp("real-full"), "full", plur_entry))


@pytest.fixture(scope="module")
def fake_lean(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    root = tmp_path_factory.mktemp("fake-lean")
    yield from _start(fakeplur_spec(root, "lean", store=root / "store.json"))


@pytest.fixture(scope="module")
def fake_full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    root = tmp_path_factory.mktemp("fake-full")
    yield from _start(fakeplur_spec(root, "full", store=root / "store.json"))


@pytest.fixture(scope="module")
def servers(real_lean, real_full, fake_lean, fake_full) -> dict[tuple[str, str], ServerThread]:
    """All four, keyed by (kind, profile)."""
    return {("real", "lean"): real_lean, ("real", "full"): real_full,
            ("fake", "lean"): fake_lean, ("fake", "full"): fake_full}
