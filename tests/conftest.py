"""Shared fixtures: every test gets its own TMG_HOME, and no user config leaks in."""

from __future__ import annotations

import pytest

from tests.support.ci_strict import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401 - hooks


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("tmg-home")
    monkeypatch.setenv("TMG_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))
    monkeypatch.setenv("TMG_RETRY_BASE_DELAY", "0.001")
    # In-process tests own the memory servers they start (and check how they stop them); the
    # broker path, detached processes and all, is tested end to end (e2e/test_memory_broker.py)
    # and by the contract tests' broker transport.
    monkeypatch.setenv("TMG_MEMORY_BROKER", "0")
    for name in ("TMG_CONFIG", "TMG_DEBUG", "TMG_MODE", "TMG_MAX_TURNS", "TMG_SELECTED_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    return home
