"""A memory outage -- or a signal, or a kill -- loses nothing (memory.md §4, §6; quality.md §2):
the real `tmg` one-shot against the mock API and fakeplur, stopped while its end is sending the
batch to a slow server, or killed outright; the next session lands what the first one learned.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from e2e.conftest import tmg_command
from e2e.mock_llm import Text
from e2e.plur import FakePlur

ANSWER = "Rotate the heron keys every ninety days."
SLOW_BATCH = "plur_learn_batch=30"  # far longer than the test waits: the batch cannot land by itself


@pytest.fixture
def plur(tmp_path) -> FakePlur:
    return FakePlur(tmp_path)


def slow_config(plur: FakePlur) -> str:
    return plur.config(learn="batch").replace("    ENV:\n", f'    ENV:\n      FAKE_PLUR_DELAY: "{SLOW_BATCH}"\n', 1)


def wait_until(check, what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def spool_files(tmg) -> list[Path]:
    root = tmg.home / "memory" / "spool"
    return sorted(root.glob("*.json")) if root.is_dir() else []


def ring_files(tmg) -> list[Path]:
    root = tmg.home / "memory" / "spool" / "pending"
    return sorted(root.glob("*.jsonl")) if root.is_dir() else []


def start(tmg, tmp_path: Path, prompt: str) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "oneshot.out"
    with out.open("w") as sink:
        proc = subprocess.Popen(tmg_command() + ["-r", prompt], stdin=subprocess.DEVNULL, stdout=sink,
                                stderr=subprocess.PIPE, text=True, cwd=tmg.work, env=tmg.env(memory=True))
    return proc, out


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("tmg did not exit within 30 s of the signal") from None
    return proc.returncode, err


def next_session_lands_it(tmg, llm, plur) -> None:
    tmg.write_config(plur.config(learn="batch"))  # the server is quick again
    llm.enqueue(Text("Noted."))
    r = tmg.run("-r", "anything else?", env=tmg.env(memory=True))
    assert r.code == 0, r.err
    assert ANSWER in plur.statements()
    assert spool_files(tmg) == [] and ring_files(tmg) == []
    landed = [c for c in plur.calls("plur_learn_batch") if not c["is_error"]
              and ANSWER in [e["statement"] for e in FakePlur.payload(c)["engrams"]]]
    assert len(landed) == 1  # once


def test_sigterm_while_the_end_sends_the_batch_spools_it_and_the_next_session_lands_it(tmg, llm, plur, tmp_path):
    tmg.write_config(slow_config(plur))
    llm.enqueue(Text(ANSWER))
    proc, out = start(tmg, tmp_path, "how often do we rotate the heron keys?")
    wait_until(lambda: ANSWER in out.read_text(), "the answer")
    # The end has begun its flush: the batch is on disk (write-ahead) and being sent, slowly.
    wait_until(lambda: spool_files(tmg), "the write-ahead spool file")
    os.kill(proc.pid, signal.SIGTERM)
    code, err = finish(proc)
    assert code == 0, err  # the answer was given; the signal only hurried the end
    assert "Traceback" not in err
    spooled = [p.read_text() for p in spool_files(tmg)]
    assert len(spooled) == 1 and ANSWER in spooled[0]
    assert ANSWER not in plur.statements()
    next_session_lands_it(tmg, llm, plur)


def test_sigkill_while_the_instruction_and_the_episode_are_sent_loses_neither(tmg, llm, plur, tmp_path):
    # `full` (the shipped tier): the instruction's plur_learn and the answer's plur_capture hang;
    # the kill lands while both are in flight. They were spooled before they were sent.
    config = plur.config(learn="full").replace(
        "    ENV:\n", '    ENV:\n      FAKE_PLUR_DELAY: "plur_learn=30,plur_capture=30"\n', 1)
    tmg.write_config(config)
    llm.enqueue(Text(ANSWER))
    instruction = "From now on, rotate the heron keys every ninety days."
    proc, out = start(tmg, tmp_path, instruction)
    wait_until(lambda: ANSWER in out.read_text(), "the answer")
    wait_until(lambda: len(spool_files(tmg)) == 2, "the two writes spooled ahead")
    proc.kill()  # no end at all: the spool is all that is left
    finish(proc)
    assert plur.statements() == [] and plur.episodes() == []
    tmg.write_config(plur.config(learn="full"))  # the server is quick again
    llm.enqueue(Text("Noted."))
    r = tmg.run("-r", "anything else?", env=tmg.env(memory=True))
    assert r.code == 0 and r.err == "", r.err
    assert plur.statements() == [instruction] and plur.engrams()[0]["pinned"] is True
    assert ANSWER in [e["summary"] for e in plur.episodes()]
    assert spool_files(tmg) == []