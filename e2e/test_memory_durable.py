"""A memory outage -- or a signal, or a kill -- loses nothing (memory.md §4, §6; quality.md §2):
the real `tmg` one-shot against the mock API and fakeplur, stopped while its end is sending the
batch to a slow server, or killed outright; the next session lands what the first one learned.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
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


def test_sigterm_while_the_end_sends_the_batch_keeps_it_and_the_next_session_lands_it(tmg, llm, plur, tmp_path):
    tmg.write_config(slow_config(plur))
    llm.enqueue(Text(ANSWER))
    proc, out = start(tmg, tmp_path, "how often do we rotate the heron keys?")
    wait_until(lambda: ANSWER in out.read_text(), "the answer")
    # The end has begun its flush: the batch is on disk (write-ahead: the ring's own file) and
    # being sent, slowly.
    wait_until(lambda: "plur_learn_batch" in plur.held(), "the batch held by the server")
    assert len(ring_files(tmg)) == 1 and ANSWER in ring_files(tmg)[0].read_text()
    os.kill(proc.pid, signal.SIGTERM)
    code, err = finish(proc)
    assert code == 0, err  # the answer was given; the signal only hurried the end
    assert "Traceback" not in err
    kept = [p.read_text() for p in ring_files(tmg) + spool_files(tmg)]
    assert len(kept) == 1 and ANSWER in kept[0]
    assert ANSWER not in plur.statements()
    next_session_lands_it(tmg, llm, plur)


def test_sigkill_while_the_instruction_is_sent_loses_nothing(tmg, llm, plur, tmp_path):
    # `full` (the shipped tier): the instruction's plur_learn hangs; the kill lands while it is in
    # flight. It was spooled before it was sent. (The answer itself is not written to memory.)
    config = plur.config(learn="full").replace(
        "    ENV:\n", '    ENV:\n      FAKE_PLUR_DELAY: "plur_learn=30"\n', 1)
    tmg.write_config(config)
    llm.enqueue(Text(ANSWER))
    instruction = "From now on, rotate the heron keys every ninety days."
    proc, out = start(tmg, tmp_path, instruction)
    wait_until(lambda: ANSWER in out.read_text(), "the answer")
    wait_until(lambda: len(spool_files(tmg)) == 1, "the learn spooled ahead")
    proc.kill()  # no end at all: the spool is all that is left
    finish(proc)
    assert plur.statements() == [] and plur.episodes() == []
    tmg.write_config(plur.config(learn="full"))  # the server is quick again
    llm.enqueue(Text("Noted."))
    r = tmg.run("-r", "anything else?", env=tmg.env(memory=True))
    assert r.code == 0 and r.err == "", r.err
    assert plur.statements() == [instruction] and plur.engrams()[0]["pinned"] is True
    assert plur.episodes() == [] and spool_files(tmg) == []

def put_spool(tmg, name: str, statements: list[str]) -> Path:
    root = tmg.home / "memory" / "spool"
    root.mkdir(parents=True, exist_ok=True)
    path = root / name
    path.write_text(json.dumps({"version": 1, "engrams": [{"statement": s, "tags": ["session:old"]} for s in statements]}))
    return path


def test_a_poisoned_spool_file_is_quarantined_once_and_never_blocks_the_rest(tmg, llm, plur):
    poisoned = put_spool(tmg, "00000000000000000001-1-aaaaaa.json", ["POISON-7731 cannot be stored"])
    put_spool(tmg, "00000000000000000002-1-bbbbbb.json", ["An older lesson that lands."])
    tmg.write_config(plur.config(learn="batch", poison="POISON-7731"))
    errs = []
    for index in range(4):
        llm.enqueue(Text(f"Answer number {index}."))
        r = tmg.run("-r", f"question {index}", env=tmg.env(memory=True))
        assert r.code == 0, r.err
        errs.append(r.err)
        # the batches behind the poisoned one landed at once: it never blocks them
        assert "An older lesson that lands." in plur.statements() and f"Answer number {index}." in plur.statements()
    moved = tmg.home / "memory" / "spool" / "quarantine" / poisoned.name
    assert not poisoned.exists() and "POISON-7731" in moved.read_text()
    said = [line for err in errs for line in err.splitlines() if "quarantine" in line]
    assert len(said) == 1 and str(moved) in said[0] and "refused 3 times" in said[0]
    assert "memory write failures" not in errs[3]  # quarantined: no longer tried, no longer a failure


def test_batch_items_the_server_refuses_one_by_one_are_counted_and_kept(tmg, llm, plur):
    # A blank statement (leaked markup the server cuts to nothing) and a connection string the
    # server's secret detector refuses: no isError, yet two items were not written.
    put_spool(tmg, "00000000000000000001-1-aaaaaa.json",
              ["</statement>", "Sessions live in redis://cache.internal:6379 in staging.", "A good old lesson."])
    tmg.write_config(plur.config(learn="batch"))
    llm.enqueue(Text("A fresh answer."))
    r = tmg.run("-r", "anything?", env=tmg.env(memory=True))
    assert r.code == 0
    assert sorted(plur.statements()) == ["A fresh answer.", "A good old lesson."]
    assert "memory write failures: 2" in r.err
    (kept,) = (tmg.home / "memory" / "spool" / "quarantine").glob("*.json")
    refused = json.loads(kept.read_text())["items"]
    assert [i["statement"] for i in refused] == ["</statement>", "Sessions live in redis://cache.internal:6379 in staging."]
    assert "non-empty" in refused[0]["error"] and "Secret detected" in refused[1]["error"]
    assert str(kept) in r.err


def test_a_memory_server_that_never_finishes_starting_is_reported_in_a_one_shot(tmg, llm, tmp_path):
    hung = tmp_path / "hung-server.py"
    hung.write_text("import time\ntime.sleep(120)\n")
    tmg.write_config(f"MCP_SERVERS:\n  plur:\n    COMMAND: {json.dumps(sys.executable)}\n    ARGS: [{json.dumps(str(hung))}]\n"
                     "    TIMEOUT: 60\nMEMORY:\n  LEARN: full\n")
    llm.enqueue(Text("An answer without memory."))
    r = tmg.run("-r", "From now on, answer in French.", env=tmg.env(memory=True, TMG_RECALL_WAIT="0.2"))
    assert r.code == 0 and r.out == "An answer without memory.\n"
    (notice,) = [line for line in r.err.splitlines() if "memory write failures" in line]
    assert "the memory server never finished starting" in notice
    assert spool_files(tmg)  # the instruction waits in the spool for a session with a server
