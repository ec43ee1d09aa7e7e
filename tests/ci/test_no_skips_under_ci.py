"""Under CI=true a skip fails the run (a skipped live or tmux leg proves nothing); locally it stays a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SUITE = '''
import pytest

def test_runs():
    assert True

@pytest.mark.skipif(True, reason="tmux is not installed")
def test_marked_skip():
    pass

def test_skips_inside():
    pytest.skip("real PLUR server unavailable: node is not installed")

@pytest.mark.xfail(reason="known", strict=False)
def test_expected_failure():
    assert False
'''

MODULE_SKIP = '''
import pytest
pytest.skip("llama-cpp-python is not installed", allow_module_level=True)
'''


def _run(tmp_path: Path, ci: str | None, suite: str = SUITE) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        "from tests.support.ci_strict import pytest_make_collect_report, pytest_runtest_makereport\n"
    )
    (tmp_path / "test_legs.py").write_text(suite)
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(REPO)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )


def test_under_ci_every_skip_is_a_failure_that_says_why(tmp_path: Path) -> None:
    done = _run(tmp_path, "true")
    assert done.returncode == 1, done.stdout
    tail = done.stdout.strip().splitlines()[-1]
    # A skipif mark fails in setup (an error), pytest.skip in the call (a failure): both fail the run.
    assert "1 failed" in tail and "1 error" in tail and "2 passed" in tail and "1 xfailed" in tail
    assert "skipped" not in tail
    assert "tmux is not installed" in done.stdout
    assert "node is not installed" in done.stdout
    assert "under CI=true nothing may skip" in done.stdout


def test_under_ci_a_module_level_skip_fails_the_run(tmp_path: Path) -> None:
    done = _run(tmp_path, "true", MODULE_SKIP)
    assert done.returncode != 0, done.stdout
    assert "llama-cpp-python is not installed" in done.stdout
    assert "under CI=true nothing may skip" in done.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_a_skip_stays_a_skip(tmp_path: Path, ci: str | None) -> None:
    done = _run(tmp_path, ci)
    assert done.returncode == 0, done.stdout
    assert "2 skipped" in done.stdout.strip().splitlines()[-1]
    done = _run(tmp_path, ci, MODULE_SKIP)
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout.strip().splitlines()[-1]
