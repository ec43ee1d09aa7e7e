"""A real full disk under TMG_HOME (a tmpfs of a few pages, mounted for the test: root only): the
one-shot says plainly what was not stored and exits 1, never `internal error`; the history loads
and the next run, with room again, goes on from it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from e2e.mock_llm import Text

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


@pytest.fixture
def small_disk(tmg):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for TMG_HOME needs root")
    tmg.home.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(tmg.home)], check=True)
    try:
        yield tmg.home
    finally:
        subprocess.run(["umount", "-l", str(tmg.home)], check=False)


def fill(folder: Path) -> Path:
    """Take every free byte left on ``folder``'s filesystem (the files already there keep the room
    left in their last page)."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    with open(folder / "filler-small", "wb", buffering=0) as f:  # and the bytes under a page
        try:
            while True:
                f.write(b"\0")
        except OSError:
            pass
    return filler


def history_lines(home: Path) -> list[dict]:
    (path,) = list((home / "sessions").rglob("history.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]  # every line whole


def test_an_answer_the_full_disk_cannot_take_is_said_not_stored_and_the_history_still_loads(tmg, llm, small_disk):
    llm.enqueue(Text("first answer"))
    assert tmg.run("first question").code == 0
    filler = fill(small_disk)
    long_answer = "a long answer that needs a page of its own. " * 200
    llm.enqueue(Text(long_answer))
    r = tmg.run("second question")
    assert r.code == 1, r.err
    assert "internal error" not in r.err
    assert "the answer above was NOT stored in the session's history (No space left on device" in r.err
    assert r.out.strip() == long_answer.strip()  # shown in full, and said not kept
    contents = [m.get("content") for m in history_lines(small_disk)]
    assert contents[:2] == ["first question", "first answer"] and long_answer not in contents
    filler.unlink()
    (small_disk / "filler-small").unlink()
    shown = tmg.run("-t")
    assert shown.code == 0 and "first answer" in shown.out and "skipped" not in shown.err
    llm.enqueue(Text("third answer"))
    assert tmg.run("third question").code == 0
    assert [m.get("content") for m in history_lines(small_disk)][-2:] == ["third question", "third answer"]


def test_a_prompt_the_full_disk_cannot_take_is_not_sent(tmg, llm, small_disk):
    llm.enqueue(Text("first answer"))
    assert tmg.run("first question").code == 0
    fill(small_disk)
    sent = len(llm.requests)
    r = tmg.run("a question " * 500)  # bigger than the room left in the history's last page
    assert r.code == 1 and "internal error" not in r.err
    assert "your prompt was not sent: it could not be stored (No space left on device" in r.err
    assert len(llm.requests) == sent
    assert [m.get("content") for m in history_lines(small_disk)] == ["first question", "first answer"]
