"""Live contract fixtures: the real @plur-ai/mcp (pinned, installed on demand) and fakeplur.

One server per profile per test module (a PLUR start costs about 0.65 s). The only skip is
node/npm being absent; once a server has started, every mismatch is a hard failure.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.plur_server import (
    ServerThread,
    fakeplur_spec,
    real_plur_spec,
    running,
)
from tests.support.brokers import stop_brokers_under
from tests.support.plur_fixtures import plur_entry  # noqa: F401 - a fixture


def _start(spec, broker_home: Path | None = None) -> Iterator[ServerThread]:
    with running(spec, broker_home) as server:
        yield server


@pytest.fixture(scope="module", params=["direct", "broker"])
def transport(request, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path | None]:
    """How the real PLUR is reached: spawned directly, or through the memory broker (the way
    every tmg run reaches it): the contract holds either way. Yields the broker's TMG_HOME."""
    if request.param == "direct":
        yield None
        return
    home = tmp_path_factory.mktemp("broker-home")
    try:
        yield home
    finally:
        stop_brokers_under(home)


@pytest.fixture(scope="module")
def real_lean(plur_entry: Path, transport: Path | None,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    yield from _start(real_plur_spec(tmp_path_factory.mktemp("real-lean"), "lean", plur_entry), transport)


@pytest.fixture(scope="module")
def real_full(plur_entry: Path, transport: Path | None,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    yield from _start(real_plur_spec(tmp_path_factory.mktemp("real-full"), "full", plur_entry), transport)


@pytest.fixture(scope="module")
def fake_lean(transport: Path | None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    root = tmp_path_factory.mktemp("fake-lean")
    yield from _start(fakeplur_spec(root, "lean", store=root / "store.json"), transport)


@pytest.fixture(scope="module")
def fake_full(transport: Path | None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    root = tmp_path_factory.mktemp("fake-full")
    yield from _start(fakeplur_spec(root, "full", store=root / "store.json"), transport)


@pytest.fixture(scope="module")
def servers(real_lean, real_full, fake_lean, fake_full) -> dict[tuple[str, str], ServerThread]:
    """All four, keyed by (kind, profile)."""
    return {("real", "lean"): real_lean, ("real", "full"): real_full,
            ("fake", "lean"): fake_lean, ("fake", "full"): fake_full}
