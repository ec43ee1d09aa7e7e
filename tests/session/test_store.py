"""Sessions on disk: per mode and project, resume, new, find by prefix, the lock, side sessions, a
TMG_HOME from before projects, an unusable TMG_HOME."""

from __future__ import annotations

import asyncio

import pytest

from tmg.errors import SessionBusyError, TmgError, UsageError
from tmg.project import project_root
from tmg.session.choice import SessionWish, choose_session
from tmg.session.store import SessionLock, SessionRef, SessionStore, lock_session


@pytest.fixture
def a(tmp_path):
    folder = tmp_path / "a"
    folder.mkdir()
    return folder


@pytest.fixture
def b(tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    return folder


def test_resume_new_and_find(tmp_path, a):
    store = SessionStore(tmp_path)
    first = store.resume_or_start("default", a)
    assert store.resume_or_start("default", a) == first
    second = store.resume_or_start("default", a, new=True)
    assert second != first and store.current("default", a) == second
    assert store.find(first.id) == first
    with pytest.raises(UsageError, match="ambiguous"):
        store.find(first.id[:8])  # both were made today
    assert [r.id for r in store.list()] == sorted([first.id, second.id])
    with pytest.raises(UsageError, match="no session 'nope'"):
        store.find("nope")


def test_sessions_made_within_one_second_sort_by_name_in_the_order_they_were_made(tmp_path, a):
    # The listing and "the first session" go by name: a second's sessions must not be shuffled.
    store = SessionStore(tmp_path)
    made = [store.start_new("default", a).id for _ in range(40)]
    assert len(set(made)) == 40 and made == sorted(made)


def test_each_project_has_its_own_current_session(tmp_path, a, b):
    store = SessionStore(tmp_path)
    in_a = store.resume_or_start("default", a)
    in_b = store.resume_or_start("default", b)
    assert in_a != in_b
    assert store.resume_or_start("default", a) == in_a and store.resume_or_start("default", b) == in_b
    assert store.project_of(in_a) == a and store.project_of(in_b) == b
    newer = store.resume_or_start("default", b, new=True)  # --new in b leaves a's session alone
    assert store.current("default", a) == in_a and store.current("default", b) == newer
    assert store.currents("default") == {in_a.id, newer.id}
    assert store.list() == sorted([in_a, in_b, newer], key=lambda r: r.id)  # pointer files are no sessions


def test_the_project_is_the_git_root_else_the_folder(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    assert project_root(repo / "src" / "deep") == repo.resolve()
    worktree = tmp_path / "wt"
    (worktree / "sub").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's .git is a file
    assert project_root(worktree / "sub") == worktree.resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_root(plain) == plain.resolve()
    link = tmp_path / "link"
    link.symlink_to(repo / "src")
    assert project_root(link) == repo.resolve()  # one project however the folder is spelled


def test_continue_takes_the_most_recently_active_session_of_the_project(tmp_path, a, b):
    import os

    store = SessionStore(tmp_path)
    older = store.start_new("default", a)
    side = store.start_side("default", a)  # a side session, written last
    store.start_new("default", b)  # another project's, newer still
    for ref, when in ((older, 1000), (side, 2000)):
        ref.history_path.write_text("{}\n")
        os.utime(ref.history_path, (when, when))
    said: list[str] = []
    chosen = choose_session(store, "default", a, SessionWish(latest=True), said.append)
    assert chosen == side and store.current("default", a) == side and said == []
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    made = choose_session(store, "default", fresh, SessionWish(latest=True), said.append)
    assert store.project_of(made) == fresh and "no earlier session" in said[0]


def test_resume_by_id_of_this_project_makes_it_current_and_of_another_does_not(tmp_path, a, b):
    store = SessionStore(tmp_path)
    old = store.start_new("default", a)
    now = store.start_new("default", a)
    said: list[str] = []
    assert choose_session(store, "default", a, SessionWish(resume=old.id), said.append) == old
    assert store.current("default", a) == old and said == []
    theirs = store.start_new("default", b)
    assert choose_session(store, "default", a, SessionWish(resume=theirs.id), said.append) == theirs
    assert store.current("default", a) == old and store.project_of(theirs) == b
    assert said == [f"session {theirs.id} belongs to {b}; it is resumed for this run only (this project's own "
                    "session is unchanged)"]
    assert now != old
    with pytest.raises(UsageError, match="picks a session in the interactive chat"):
        choose_session(store, "default", a, SessionWish(resume=""), said.append)
    store.start_new("work", a)
    with pytest.raises(UsageError, match="--mode default --resume"):
        choose_session(store, "work", a, SessionWish(resume=old.id), said.append)


def test_a_home_from_before_projects_is_listed_found_and_never_continued_on_its_own(tmp_path, a, b):
    store = SessionStore(tmp_path)
    legacy = SessionRef("default", "20240101-000000-abcd", tmp_path / "sessions" / "default" / "20240101-000000-abcd")
    legacy.dir.mkdir(parents=True)
    legacy.history_path.write_text('{"role":"user","content":"project A secret"}\n')
    (legacy.dir.parent / "current").write_text(legacy.id + "\n")
    assert store.legacy_current("default") == legacy and store.project_of(legacy) is None
    said: list[str] = []
    first = choose_session(store, "default", b, SessionWish(), said.append)
    assert first != legacy and store.project_of(first) == b
    assert len(said) == 1 and f"tmg --resume {legacy.id}" in said[0]
    assert choose_session(store, "default", a, SessionWish(), said.append) != legacy and len(said) == 1  # said once
    assert store.find(legacy.id[:15]) == legacy  # `tmg -t ID` still finds it
    adopted = choose_session(store, "default", a, SessionWish(resume=legacy.id), said.append)
    assert adopted == legacy and store.project_of(legacy) == a and store.current("default", a) == legacy
    assert "belongs to" in said[-1] and "from now on" in said[-1]


async def test_a_held_session_makes_the_second_user_wait_then_say_it_is_busy(tmp_path, a):
    ref = SessionStore(tmp_path).resume_or_start("default", a)
    holder = SessionLock(ref)
    await holder.acquire()
    with pytest.raises(SessionBusyError, match="in use by another tmg.*--new"):
        await SessionLock(ref, wait=0.2).acquire()
    holder.release()
    second = SessionLock(ref, wait=0.2)
    await second.acquire()  # free again: no error
    second.release()


async def test_waiting_for_a_held_session_lets_the_event_loop_run_what_frees_it(tmp_path, a):
    # /mode to a session a one-shot is finishing: the wait must not freeze the REPL's other tasks.
    # Here the holder lets go from another task, which runs only if the wait yields to the loop.
    ref = SessionStore(tmp_path).resume_or_start("default", a)
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


async def test_a_run_finding_its_session_open_in_a_chat_takes_a_side_session_at_once(tmp_path, a):
    store = SessionStore(tmp_path)
    ref = store.resume_or_start("default", a)
    chat = await lock_session(store, ref, a, True, lambda _line: None)
    said: list[str] = []
    side = await lock_session(store, ref, a, False, said.append)
    assert side.ref != ref and side.ref.mode == "default" and store.current("default", a) == ref
    assert store.project_of(side.ref) == a
    assert said == [f"session {ref.id} is open in another tmg; this answer goes to a side session "
                    f"{side.ref.id} (tmg -t {side.ref.id})"]
    second_chat = await lock_session(store, ref, a, True, said.append)  # a second chat starts beside it
    assert second_chat.ref not in (ref, side.ref) and store.current("default", a) == ref
    assert said[-1] == (f"session {ref.id} is open in another tmg; this chat goes on in a side session "
                        f"{second_chat.ref.id} (tmg -t {second_chat.ref.id})")
    with pytest.raises(SessionBusyError):
        await lock_session(store, ref, a, True, said.append, side_ok=False)  # tmg compact: busy
    for lock in (second_chat, side, chat):
        lock.release()


def test_an_unusable_home_is_a_clear_error_naming_tmg_home(tmp_path, a):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(TmgError, match="set TMG_HOME to a folder you can write to"):
        SessionStore(blocker / "home").resume_or_start("default", a)
    with pytest.raises(TmgError, match="set TMG_HOME to a folder you can write to"):
        choose_session(SessionStore(blocker / "home"), "default", a, SessionWish(new=True), print)


def test_mode_names_cannot_escape_the_sessions_folder(tmp_path, a):
    with pytest.raises(UsageError, match="mode name"):
        SessionStore(tmp_path).resume_or_start("../evil", a)
