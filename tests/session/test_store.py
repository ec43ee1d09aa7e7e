"""Sessions on disk: resume, new, find by prefix, the lock, an unusable TMG_HOME."""

from __future__ import annotations

import pytest

from tmg.errors import SessionBusyError, TmgError, UsageError
from tmg.session.store import SessionLock, SessionStore


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


def test_a_held_session_makes_the_second_user_wait_then_say_it_is_busy(tmp_path):
    ref = SessionStore(tmp_path).resume_or_start("default")
    holder = SessionLock(ref)
    holder.acquire()
    with pytest.raises(SessionBusyError, match="in use by another tmg.*--new"):
        SessionLock(ref, wait=0.2).acquire()
    holder.release()
    second = SessionLock(ref, wait=0.2)
    second.acquire()  # free again: no error
    second.release()


def test_an_unusable_home_is_a_clear_error_naming_tmg_home(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(TmgError, match="set TMG_HOME to a folder you can write to"):
        SessionStore(blocker / "home").resume_or_start("default")


def test_mode_names_cannot_escape_the_sessions_folder(tmp_path):
    with pytest.raises(UsageError, match="mode name"):
        SessionStore(tmp_path).resume_or_start("../evil")
