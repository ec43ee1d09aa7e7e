"""The in-process command line (tests/support/cli.py) gives each run what a process would, and
takes it back: the environment, cwd, streams, exit functions and signal handlers of the test
process are as before, and a run cannot end the test process."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from tests.support.cli import run_tmg
from tmg.cli import errors


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "TMG_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user"),
            "TMG_CONFIG": str(tmp_path / "none.yaml"), "TMG_LOCAL_PROBE_PORTS": "", **extra}


def test_exit_code_and_the_lines_the_user_reads(tmp_path):
    version = run_tmg(["--version"], env=_env(tmp_path), cwd=tmp_path)
    assert (version.code, version.err) == (0, "") and version.out.startswith("tmg ")
    missing = run_tmg(["hello"], env=_env(tmp_path), cwd=tmp_path)
    assert missing.code == 1 and missing.out == ""
    assert missing.err == (f"tmg: error: config file {tmp_path / 'none.yaml'} does not exist (named by "
                           "TMG_CONFIG); fix or unset it\n")
    usage = run_tmg(["--no-such-option"], env=_env(tmp_path), cwd=tmp_path)
    assert usage.code == 2 and "No such option: --no-such-option" in usage.err


def test_the_run_sees_only_its_environment_and_cwd_and_the_test_process_gets_its_own_back(tmp_path):
    before_env, before_cwd, before_streams = dict(os.environ), os.getcwd(), (sys.stdin, sys.stdout, sys.stderr)
    (tmp_path / "tmg.yaml").write_text("PROVIDERS:\n  p:\n    MODEL: openai/x\n    URL: http://127.0.0.1:9/v1\n")
    env = _env(tmp_path)
    del env["TMG_CONFIG"]  # ./tmg.yaml of the run's cwd is the config
    result = run_tmg(["config"], env=env, cwd=tmp_path)
    assert result.code == 0, result.err
    assert str(tmp_path / "tmg.yaml") in result.out
    assert dict(os.environ) == before_env and os.getcwd() == before_cwd
    assert (sys.stdin, sys.stdout, sys.stderr) == before_streams


def test_debug_set_by_the_command_line_does_not_leak(tmp_path):
    run_tmg(["--debug", "sessions"], env=_env(tmp_path), cwd=tmp_path)
    assert "TMG_DEBUG" not in os.environ


def test_a_loaded_sdk_does_not_make_the_run_end_the_test_process(tmp_path):
    import mcp  # noqa: F401 - with it loaded, a real tmg leaves through os._exit

    result = run_tmg(["hello"], env=_env(tmp_path), cwd=tmp_path)
    assert result.code == 1
    assert errors.FAST_EXIT is True  # the real command keeps its fast exit


def test_exit_functions_registered_by_a_run_run_at_its_end_not_at_the_test_processs(tmp_path, monkeypatch):
    ran: list[str] = []
    from tmg.cli import chat_line

    real = chat_line.run_chat

    def run_chat(line):
        atexit.register(ran.append, "exit function")
        return real(line)

    monkeypatch.setattr(chat_line, "run_chat", run_chat)
    run_tmg(["hello"], env=_env(tmp_path), cwd=tmp_path)
    assert ran == ["exit function"]
    assert atexit.register is not None and atexit.register.__module__ == "atexit"


def test_signal_handlers_are_given_back(tmp_path):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)}
    run_tmg(["hello"], env=_env(tmp_path), cwd=tmp_path)
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_thread_that_outlives_the_run_fails_it_naming_the_thread(tmp_path, monkeypatch):
    from tmg.cli import chat_line

    stop = threading.Event()

    def run_chat(line):
        threading.Thread(target=stop.wait, name="left-behind", daemon=True).start()
        return 0

    monkeypatch.setattr(chat_line, "run_chat", run_chat)
    try:
        with pytest.raises(AssertionError, match="left-behind"):
            run_tmg(["hello"], env=_env(tmp_path), cwd=tmp_path, thread_grace=0.1)
    finally:
        stop.set()


def test_stdin_is_what_the_run_reads_and_none_is_an_empty_one(tmp_path):
    binary = run_tmg([], env=_env(tmp_path), cwd=tmp_path, stdin="a\0b")
    assert binary.code == 2 and "the piped input is binary" in binary.err
    nothing = run_tmg([], env=_env(tmp_path), cwd=tmp_path)
    assert nothing.code == 2 and "no prompt given" in nothing.err
