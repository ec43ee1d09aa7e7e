"""kill -9 at random moments over real `tmg` one-shots with memory on (issue 9, defects 4 and 5):
every answer that was printed in full is in history, every stored answer reaches the memory
store (or waits in the spool or a pending ring for the next session), and every history loads.

The loop is seeded: TMG_FAULT_SEED=N re-runs one sequence, TMG_FAULT_KILLS=N changes its
length. It prints its figures (kills tried / printed answers lost / learnings lost) for
BENCHMARKS.md; run it with `-s` to see them.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from e2e.conftest import tmg_command
from e2e.mock_llm import Echo, Text
from e2e.plur import FakePlur

PREFIX = "Noted, "
WAIT_S = 60.0  # how long one run may take to reach the point where it is killed (never a hang)


@pytest.fixture
def plur(tmp_path) -> FakePlur:
    return FakePlur(tmp_path)


def spool_root(tmg) -> Path:
    return tmg.home / "memory" / "spool"


def waiting_on_disk(tmg) -> str:
    """Everything memory keeps for a later session: spool files and pending rings (temps too)."""
    root = spool_root(tmg)
    if not root.is_dir():
        return ""
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def history_answers(tmg) -> list[str]:
    """The assistant texts in every session's history file, read line by line (a torn last
    line is what a kill may leave; it is skipped here as tmg skips it)."""
    answers = []
    for path in (tmg.home / "sessions").rglob("history.jsonl"):
        for line in path.read_bytes().split(b"\n"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("role") == "assistant":
                answers.append(record.get("content") or "")
    return answers


def wait_for(check, proc: subprocess.Popen, what: str) -> bool:
    """Poll until ``check()``; False when the process ended first."""
    deadline = time.monotonic() + WAIT_S
    while not check():
        if proc.poll() is not None:
            return check()
        assert time.monotonic() < deadline, f"tmg did not reach {what} within {WAIT_S:g} s"
        time.sleep(0.002)
    return True


def test_kill_9_at_random_moments_loses_no_printed_answer_and_no_learning(tmg, llm, plur, tmp_path):
    seed = int(os.environ.get("TMG_FAULT_SEED") or random.SystemRandom().randrange(1 << 32))
    kills = int(os.environ.get("TMG_FAULT_KILLS") or 30)
    rng = random.Random(seed)
    print(f"\nkill loop: TMG_FAULT_SEED={seed} TMG_FAULT_KILLS={kills}")
    llm.default = Echo(prefix=PREFIX, chunks=4, chunk_delay=0.02)
    printed_in_full: list[str] = []
    lost_printed: list[str] = []
    learned_as: dict[str, str] = {}  # answer -> what must reach memory: batch the answer, full the user's words
    for i in range(kills):
        learn = rng.choice(["batch", "full"])
        # One session throughout: MAX_LEARNS_PER_SESSION holds across its one-shots, so it is raised.
        tmg.write_config(plur.config(learn=learn) + "  MAX_LEARNS_PER_SESSION: 100\n")
        fact = f"the heron feeder is at post {rng.randrange(10**6):06d}"
        prompt = f"remember fact {i} of run {seed}: {fact}"
        answer = PREFIX + prompt
        learned_as[answer] = answer if learn == "batch" else fact  # full keeps what was taught, not the ask
        out_path, err_path = tmp_path / f"out-{i}.txt", tmp_path / f"err-{i}.txt"
        with out_path.open("wb") as out, err_path.open("wb") as err:
            proc = subprocess.Popen(tmg_command() + ["-r", prompt], stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err, cwd=tmg.work, env=tmg.env(memory=True))
        try:
            # A third each: just after the whole answer is printed (0-50 ms), while it streams,
            # and at any moment of the run (startup, recall, the session end's flush).
            moment = i % 3
            if moment == 0:
                wait_for(lambda: out_path.read_bytes() == (answer + "\n").encode(), proc, "the whole answer")
                # Half at once: the narrowest window, right behind the last character.
                time.sleep(rng.choice([0.0, rng.uniform(0, 0.05)]))
            elif moment == 1:
                wait_for(lambda: out_path.stat().st_size > 0, proc, "the first text")
                time.sleep(rng.uniform(0, 0.03))
            else:  # a run that ends before its moment has nothing left to kill: no wait past its end
                try:
                    proc.wait(timeout=rng.uniform(0, 2.5))
                except subprocess.TimeoutExpired:
                    pass
            proc.kill()
        finally:
            proc.kill()
            proc.wait(timeout=30)
        shown = out_path.read_bytes()
        if shown == (answer + "\n").encode():
            printed_in_full.append(answer)
            if answer not in history_answers(tmg):
                lost_printed.append(f"run {i} (killed {['after', 'during', 'anytime'][moment]} the answer)")
        assert b"Traceback" not in err_path.read_bytes()

    # Later sessions, not killed, land what the killed ones left on disk.
    for _ in range(6):
        r = tmg.run("-r", "anything to add?", env=tmg.env(memory=True), timeout=120)
        assert r.code == 0, r.err
        if not waiting_on_disk(tmg).strip():
            break
    stored = [a for a in history_answers(tmg) if a.startswith(PREFIX + "remember fact")]
    # batch learns answers as engrams; full (the shipped tier) learns the user's own words
    statements = plur.statements()
    waiting = waiting_on_disk(tmg)
    lost_learnings = [a for a in stored if not any(learned_as[a] in s for s in statements)
                      and json.dumps(learned_as[a])[1:-1] not in waiting]

    r = tmg.run("-t", "--json")  # the history loads, whole
    assert r.code == 0, r.err
    messages = json.loads(r.out)["messages"]
    assert all(m["role"] in ("user", "assistant", "tool") for m in messages)

    print(f"kills tried: {kills}; answers printed in full: {len(printed_in_full)}; printed answers lost: "
          f"{len(lost_printed)}; stored answers: {len(stored)}; learnings lost: {len(lost_learnings)} "
          f"(in the store: {sum(any(learned_as[a] in s for s in statements) for a in stored)})")
    assert lost_printed == [], f"seed {seed}: printed in full but not in history: {lost_printed}"
    assert lost_learnings == [], f"seed {seed}: stored but never learned nor kept: {lost_learnings}"
    assert len(printed_in_full) >= kills // 3  # the loop did kill after whole answers


def test_temp_files_left_by_a_kill_are_picked_up_or_cleaned_by_the_next_session(tmg, llm, plur):
    """A kill between a temp file's write and its rename (the pending ring's rewrite, a spool
    put, a history rewrite): the ring's temp holds the newest engrams and is landed; the
    spool's temp holds nothing of its own (its batch is still in its ring) and is removed."""
    tmg.write_config(plur.config(learn="batch"))
    pending = spool_root(tmg) / "pending"
    pending.mkdir(parents=True)
    fact = "The heron feeder moved to post 771203 on Monday."
    (pending / "20260101-000000-abcd-4242-deadbeef.tmp").write_text(
        json.dumps({"statement": fact, "tags": ["session:20260101-000000-abcd"]}) + "\n")
    (spool_root(tmg) / ".00000000001764000000-4242-abcdef.json.tmp").write_text('{"version": 1, "engr')
    llm.enqueue(Text("Fine."))
    r = tmg.run("-r", "hello", env=tmg.env(memory=True))
    assert r.code == 0, r.err
    assert fact in plur.statements()
    leftovers = sorted(p.name for p in spool_root(tmg).rglob("*") if p.is_file())
    assert leftovers == [], leftovers
    session = tmg.session_dirs()[0]
    (session / "history.jsonl.tmp").write_text('{"role":"user","content":"half a rewr')
    llm.enqueue(Text("Again."))
    assert tmg.run("-r", "again", env=tmg.env(memory=True)).code == 0
    assert not (session / "history.jsonl.tmp").exists()
