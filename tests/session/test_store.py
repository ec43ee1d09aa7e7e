"""Sessions on disk: resume, new, find by prefix, the lock, an unusable TMG_HOME."""

from __future__ import annotations

import asyncio

import pytest

from tmg.errors import SessionBusyError, TmgError, UsageError
from tmg.session.store import SessionLock, SessionStore, lock_session


def test_resume_new_and_find(tmp_path):
    store = SessionStore(tmp_path)
    first = store.resume_or_start("default")
    assert store.resume_or_start("default") == first
    second = store.resume_or_start("default", new=True)
    assert second != first and store.current("default") == second
    assert store.find(first.id) == first
    with pytest.raises(UsageError, match="ambiguous"):
        store.find(first.id[:8])  # both were made today
    assert [r.id for r in store.list()] == sorted([first.id, second.id])
    with pytest.raises(UsageError, match="no session 'nope'"):
        store.find("nope")


async def test_a_held_session_makes_the_second_user_wait_then_say_it_is_busy(tmp_path):
    ref = SessionStore(tmp_path).resume_or_start("default")
    holder = SessionLock(ref)
    await holder.acquire()
    with pytest.raises(SessionBusyError, match="in use by another tmg.*--new"):
        await SessionLock(ref, wait=0.2).acquire()
    holder.release()
    second = SessionLock(ref, wait=0.2)
    await second.acquire()  # free again: no error
    second.release()


async def test_waiting_for_a_held_session_lets_the_event_loop_run_what_frees_it(tmp_path):
    # /mode to a session a one-shot is finishing: the wait must not freeze the REPL's other tasks.
    # Here the holder lets go from another task, which runs only if the wait yields to the loop.
    ref = SessionStore(tmp_path).resume_or_start("default")
    holder = SessionLock(ref)
    await holder.acquire()

    async def let_go() -> None:
        await asyncio.sleep(0)
        holder.release()

    freeing = asyncio.create_task(let_go())
    waiter = SessionLock(ref, wait=30.0)
    await waiter.acquire()  # a wait that blocked the loop would time out (busy) instead
    assert freeing.done()
    waiter.release()


async def test_a_one_shot_finding_its_session_open_in_a_chat_takes_a_side_session_at_once(tmp_path):
    store = SessionStore(tmp_path)
    ref = store.resume_or_start("default")
    chat = await lock_session(store, ref, True, lambda _line: None)
    said: list[str] = []
    side = await lock_session(store, ref, False, said.append)
    assert side.ref != ref and side.ref.mode == "default" and store.current("default") == ref
    assert said == [f"session {ref.id} is open in another tmg; this answer goes to a side session "
                    f"{side.ref.id} (tmg -t {side.ref.id})"]
    with pytest.raises(SessionBusyError):
        await lock_session(store, ref, True, said.append)  # a second chat is refused
    side.release()
    chat.release()


def test_an_unusable_home_is_a_clear_error_naming_tmg_home(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(TmgError, match="set TMG_HOME to a folder you can write to"):
        SessionStore(blocker / "home").resume_or_start("default")


def test_mode_names_cannot_escape_the_sessions_folder(tmp_path):
    with pytest.raises(UsageError, match="mode name"):
        SessionStore(tmp_path).resume_or_start("../evil")
