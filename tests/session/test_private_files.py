"""What tmg keeps for the user is the user's alone: TMG_HOME's folders 0700 and files 0600 from
their first byte, under any umask, and a home an older tmg left open tightened once when a
session store opens it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tmg.atomic_file import replace_file
from tmg.memory.pending import PendingRing
from tmg.memory.spool import BatchSpool
from tmg.private_files import current_umask, private_dirs, tighten
from tmg.session.history import History
from tmg.session.store import SessionLock, SessionStore
from tmg.session.transcript import Transcript


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def open_to_others(root: Path) -> list[str]:
    """Every entry under `root` (and `root`) with a group or other bit, as `mode path`."""
    found = [root, *root.rglob("*")]
    return [f"{mode(p):o} {p.relative_to(root)}" for p in found if not p.is_symlink() and mode(p) & 0o077]


@pytest.fixture
def loose_umask():
    """The umask most users have: new files 0644, folders 0755 unless tmg says otherwise."""
    old = os.umask(0o022)
    yield
    os.umask(old)


async def test_a_session_and_everything_it_writes_are_private_under_a_loose_umask(tmp_path, loose_umask) -> None:
    home = tmp_path / "tmg-home"
    store = SessionStore(home)
    ref = store.resume_or_start("default")
    lock = SessionLock(ref)
    await lock.acquire()
    history = History(ref.history_path)
    history.append({"role": "user", "content": "the staging password is in my head"})
    history.replace_all(history.messages)  # the atomic rewrite's temp file too
    transcript = Transcript(ref.transcript_path, ref.id, ref.mode)
    transcript.notice("hello")
    spool = BatchSpool(home / "memory" / "spool")
    spool.put([{"statement": "a note", "tags": []}])
    spool.quarantine_items([{"statement": "refused"}])
    PendingRing(home / "memory" / "spool" / "pending", ref.id, 20).append({"statement": "x"}, [{"statement": "x"}])
    replace_file(home / "mcp-start-times.json", b"{}", private_folder=True)
    history.close()
    transcript.close()
    lock.release()
    assert len(list(home.rglob("*"))) >= 12  # the walk below saw what was written
    assert open_to_others(home) == []


def test_replace_file_keeps_the_users_umask_for_the_folders_it_writes_for_the_user(tmp_path, loose_umask) -> None:
    replace_file(tmp_path / "project" / "src" / "new.py", b"print()\n")
    assert mode(tmp_path / "project" / "src") == 0o755  # the edit tool's folders are the user's


def test_an_open_home_is_tightened_once_and_a_private_one_is_not_walked(tmp_path, loose_umask) -> None:
    home = tmp_path / "old-home"
    (home / "sessions" / "default" / "s1").mkdir(parents=True)
    (home / "sessions" / "default" / "s1" / "history.jsonl").write_text("{}\n")
    (home / "memory-server.log").write_text("log\n")
    os.chmod(home / "memory-server.log", 0o664)
    (home / "link").symlink_to("/etc/hostname")  # never followed, never changed
    SessionStore(home)
    assert open_to_others(home) == []
    assert mode(home / "memory-server.log") == 0o600 and mode(home / "sessions") == 0o700
    # Already private: a file someone opened inside is left alone (nobody else can reach it).
    os.chmod(home / "memory-server.log", 0o644)
    assert tighten(home) == 0 and mode(home / "memory-server.log") == 0o644


def test_private_dirs_makes_only_the_missing_parts_and_leaves_existing_ones(tmp_path, loose_umask) -> None:
    (tmp_path / "existing").mkdir()
    private_dirs(tmp_path / "existing" / "a" / "b")
    assert mode(tmp_path / "existing") == 0o755
    assert mode(tmp_path / "existing" / "a") == 0o700 and mode(tmp_path / "existing" / "a" / "b") == 0o700
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError):
        private_dirs(tmp_path / "file" / "below")


def test_the_umask_is_read_without_being_changed(loose_umask) -> None:
    assert current_umask() == 0o022
    assert os.umask(0o022) == 0o022


def test_a_home_that_is_a_link_has_its_folder_tightened(tmp_path, loose_umask) -> None:
    real = tmp_path / "data" / "tmg"
    real.mkdir(parents=True)
    (real / "old.log").write_text("x\n")
    (tmp_path / "home-link").symlink_to(real)
    SessionStore(tmp_path / "home-link")
    assert open_to_others(real) == [] and mode(tmp_path / "data") == 0o755
