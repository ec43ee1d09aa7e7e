"""`tmg memory stop` signals only its own broker: a stale broker.pid may name anybody's process."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.brokers import stop_brokers_under, wait_gone
from tmg.broker.control import is_our_broker, stop
from tmg.broker.paths import LOCK_NAME, PID_NAME, private_dir, socket_path
from tmg.paths import runtime_dir


def _env(tmp_path: Path) -> dict[str, str]:
    return {"TMG_HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"]}


def _alive(proc: subprocess.Popen) -> bool:
    return proc.poll() is None


def test_a_stale_pid_file_naming_another_process_signals_nobody(tmp_path):
    env = _env(tmp_path)
    folder = private_dir(runtime_dir(env))
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        (folder / PID_NAME).write_text(str(bystander.pid))
        assert stop(env, wait=0.2) is None
        time.sleep(0.1)
        assert _alive(bystander)
        assert not (folder / PID_NAME).exists()  # the stale file is gone, so the next stop is quiet
    finally:
        bystander.kill()
        bystander.wait()


def test_a_process_that_only_looks_like_the_broker_is_not_it(tmp_path):
    env = _env(tmp_path)
    folder = private_dir(runtime_dir(env))
    # The same command line, but no broker lock held: a pid reused by a look-alike, or a test double.
    mimic = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "-m", "tmg.broker",
                              "--dir", str(folder)])
    try:
        (folder / PID_NAME).write_text(str(mimic.pid))
        assert not is_our_broker(mimic.pid, folder)
        assert stop(env, wait=0.2) is None
        time.sleep(0.1)
        assert _alive(mimic)
        with open(folder / LOCK_NAME, "a") as lock:  # now a broker's lock is held: each check counts
            fcntl.flock(lock, fcntl.LOCK_EX)
            (folder / PID_NAME).write_text(str(mimic.pid))
            assert is_our_broker(mimic.pid, folder)
            # A pid file older than the process: the process took a pid the file's broker had.
            os.utime(folder / PID_NAME, (time.time() - 3600, time.time() - 3600))
            assert not is_our_broker(mimic.pid, folder)
    finally:
        mimic.kill()
        mimic.wait()


def test_a_broker_that_does_not_answer_is_still_stopped(tmp_path):
    env = _env(tmp_path)
    folder = runtime_dir(env)
    broker = subprocess.Popen([sys.executable, "-m", "tmg.broker", "--dir", str(folder), "--idle", "60"],
                              env={**os.environ, **env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
                              start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if socket_path(folder).exists() and (folder / PID_NAME).exists():
                break
            time.sleep(0.01)
        assert is_our_broker(broker.pid, folder)
        socket_path(folder).unlink()  # it runs, but nothing answers where tmg asks
        assert stop(env, wait=5) == broker.pid
        assert wait_gone(broker.pid)
    finally:
        if broker.poll() is None:
            broker.kill()
        broker.wait()
        stop_brokers_under(tmp_path)
