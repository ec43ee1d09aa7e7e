"""Under ``CI=true`` a skipped test is a failed test.

A live PLUR leg, a tmux leg or a real-model leg that skips proves nothing, yet a run of skips is
green. CI must install what every leg needs (``scripts/bootstrap --test``) or fail saying what is
missing; locally (no ``CI``) a skip stays a skip, with its reason in the ``-ra`` summary.

Both conftests import these hooks, so every test in ``tests/`` and ``e2e/`` is covered.
"""

from __future__ import annotations

import os

import pytest

_HOW = "under CI=true nothing may skip: install what this leg needs (scripts/bootstrap --test does it where it can)"


def ci_is_strict() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail_the_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    report.longrepr = f"skipped: {_skip_reason(report)}\n{_HOW}"
    report.outcome = "failed"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # noqa: ARG001 - the hook's signature
    outcome = yield
    report = outcome.get_result()
    if ci_is_strict() and report.skipped and not hasattr(report, "wasxfail"):
        _fail_the_skip(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):  # noqa: ARG001 - the hook's signature
    outcome = yield
    report = outcome.get_result()
    if ci_is_strict() and report.skipped:
        _fail_the_skip(report)
