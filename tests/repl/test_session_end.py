"""The single session end: run exactly once for every way an interactive session can end, and
with it every resource closed (the gateway, and the session lock, which a second tmg can then take)."""

from __future__ import annotations

import asyncio
import signal

import pytest

from tmg.repl.input import PromptInterrupted
from tmg.session.store import SessionLock
from tests.repl.harness import Reply, Rig, SignalMidStream, send_signal_and_wait


def _rig(tmp_path, monkeypatch) -> Rig:
    """A rig whose first entry is answered, so the session has a live gateway to close."""
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(Reply("hello"))
    return rig


def _assert_ended_once_and_released(rig: Rig) -> None:
    assert rig.ended == [rig.opened[0].ref.id]
    assert rig.model.closed == 1
    lock = SessionLock(rig.opened[0].ref, wait=0)
    asyncio.run(lock.acquire())  # raises SessionBusyError if the end did not release it
    lock.release()


@pytest.mark.parametrize("steps", [
    ["/exit"],
    ["/quit"],
    [EOFError()],  # Ctrl-D on an empty line, or the input closed
    [PromptInterrupted(False), "  ", EOFError()],
], ids=["/exit", "/quit", "ctrl-d", "ctrl-c-then-ctrl-d"])
def test_a_normal_end_runs_the_session_end_once_and_exits_0(tmp_path, monkeypatch, steps):
    rig = _rig(tmp_path, monkeypatch)
    assert rig.run("hi", *steps) == 0
    _assert_ended_once_and_released(rig)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_at_the_prompt_ends_the_session_once(tmp_path, monkeypatch, sig):
    rig = _rig(tmp_path, monkeypatch)
    assert rig.run("hi", send_signal_and_wait(sig)) == 130
    _assert_ended_once_and_released(rig)


def test_sigterm_during_an_answer_marks_it_interrupted_and_ends_once(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(SignalMidStream("half an ans", sig=signal.SIGTERM))
    assert rig.run("a question") == 130
    assert rig.model.cancelled == 1
    _assert_ended_once_and_released(rig)
    assert "[interrupted]" in rig.transcript() and "half an ans" in rig.transcript()


def test_an_exception_ends_the_session_once_and_propagates(tmp_path, monkeypatch):
    rig = _rig(tmp_path, monkeypatch)
    with pytest.raises(OSError, match="terminal went away"):
        rig.run("hi", OSError("terminal went away"))
    _assert_ended_once_and_released(rig)


def test_new_ends_the_old_session_once_and_the_new_one_at_exit(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(Reply("first"))
    assert rig.run("q1", "/new", "/new", "/exit") == 0
    first, second, third = (s.ref.id for s in rig.opened)
    assert len({first, second, third}) == 3
    assert rig.ended == [first, second, third]  # each once, in order, the last at exit


def test_a_failed_switch_keeps_the_current_session_open(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(Reply("still here"))
    assert rig.run("/mode bad/name", "question", "/exit") == 0
    assert "mode name 'bad/name' is not usable" in rig.err.getvalue()
    assert rig.ended == [rig.opened[0].ref.id]
    assert rig.out.getvalue() == "still here\n"
