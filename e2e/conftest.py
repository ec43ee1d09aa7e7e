"""End-to-end fixtures: the real ``tmg`` command as a subprocess, a TMG_HOME of its own, and a
local OpenAI-compatible mock API (``e2e.mock_llm``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.mock_llm import MockLLM
from tests.support.ci_strict import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401 - hooks
from tests.support.plur_fixtures import plur_entry  # noqa: F401 - a fixture
from tests.support.brokers import stop_brokers_under
from tests.support.cli import Result, run_tmg  # noqa: F401 - Result: the tests import it from here

API_KEY = "sk-test-canary-5f3a9c1e"  # must never show up in history, transcript or output


def tmg_command() -> list[str]:
    """The installed console script when there is one (what users run), else ``python -m tmg``."""
    script = shutil.which("tmg", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "tmg"]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "in_process: `tmg.run` runs tmg.cli.main in the test's process (tests/support/cli.py), "
        "for checks a real process adds nothing to")


class TmgRunner:
    """Runs tmg against the mock with a config file and TMG_HOME in a temp dir: as a subprocess,
    or (``in_process``, set by the ``in_process`` mark) through tests/support/cli.py."""

    def __init__(self, root: Path, llm: MockLLM, in_process: bool = False) -> None:
        self.in_process = in_process
        self.root = root
        self.home = root / "home"
        self.work = root / "work"
        self.work.mkdir(parents=True, exist_ok=True)
        self.config = root / "tmg.yaml"
        self.llm = llm
        self.write_config()

    def write_config(self, extra: str = "", backend: str = "auto") -> None:
        self.config.write_text(
            "PROVIDERS:\n"
            "  mock:\n"
            "    MODEL: openai/mock-model\n"
            "    API_KEY: ${MOCK_API_KEY}\n"
            f"    URL: {self.llm.url}\n"
            f"    BACKEND: {backend}\n" + extra
        )

    def env(self, memory: bool = False, **extra: str) -> dict[str, str]:
        """tmg's environment; ``memory=True`` leaves MEMORY to the config (and its defaults)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TMG_", "OPENAI_", "ANTHROPIC_"))}
        env.update(
            TMG_HOME=str(self.home),
            TMG_CONFIG=str(self.config),
            MOCK_API_KEY=API_KEY,
            TMG_RETRY_BASE_DELAY="0.01",
            XDG_CONFIG_HOME=str(self.root / "xdg"),
            # A home of its own: a PLUR the shipped config starts (doctor, memory legs) keeps
            # its store and pid file in $HOME/.plur, never in the real user's.
            HOME=str(self.root / "user-home"),
            PYTHONPATH=str(Path(__file__).resolve().parent.parent),
            # Memory is on by default with the real PLUR; tests opt in (memory=True) so that
            # no other test starts a server, or writes to a store, by accident.
            TMG_MEMORY_ENABLED="false",
            # No probe of the machine's loopback ports for a local model server when a config
            # names no provider: a test that wants one says which port (e2e/test_local_server.py).
            TMG_LOCAL_PROBE_PORTS="",
        )
        if memory:
            del env["TMG_MEMORY_ENABLED"]
            # A loaded CI machine can take seconds to start a server; the recall must not be
            # skipped by chance in a test that checks it (the skip has its own unit test).
            env["TMG_RECALL_WAIT"] = "30"
        env.update(extra)
        return env

    def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 60, cwd: Path | None = None) -> Result:
        if self.in_process:
            return run_tmg(args, env=env or self.env(), cwd=cwd or self.work, stdin=stdin, timeout=timeout)
        return self.run_subprocess(*args, stdin=stdin, env=env, timeout=timeout, cwd=cwd)

    def run_subprocess(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
                       timeout: float = 60, cwd: Path | None = None) -> Result:
        proc = subprocess.run(
            tmg_command() + list(args),
            input=stdin if stdin is not None else None,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout, cwd=cwd or self.work, env=env or self.env(),
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def session_dirs(self, mode: str = "default") -> list[Path]:
        root = self.home / "sessions" / mode
        return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


@pytest.fixture
def llm():
    with MockLLM() as mock:
        yield mock


@pytest.fixture
def tmg(tmp_path, llm, request):
    yield TmgRunner(tmp_path, llm, in_process=request.node.get_closest_marker("in_process") is not None)
    stop_brokers_under(tmp_path)  # a memory run starts a detached broker: it must not outlive its test


@pytest.fixture(scope="session", autouse=True)
def _no_broker_outlives_the_run(tmp_path_factory):
    yield
    stop_brokers_under(tmp_path_factory.getbasetemp())
