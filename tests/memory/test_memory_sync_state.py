"""The sync pieces a user sees: how PLUR's plur_sync answers are told, when a session's end syncs,
what `tmg memory status` says, and the git mends (a real git, local repositories only)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tmg.config.model import SyncConfig
from tmg.memory.client import CallResult
from tmg.memory.sync import SyncState, explain, last_sync_line, read_answer, status_lines
from tmg.memory.sync_git import IGNORE_MARK, SYNCED, ensure_ignored, join, remote_branch, tracks
from tmg.memory.sync_record import (PULL_EVERY_S, SyncRecord, due, read_record, record_path, tell, told,
                                    write_record)

# plur_sync's answers, in the real 0.20.0 server's words (@plur-ai/core's sync: its message parts).
SYNCED_OK = json.dumps({"action": "synced",
                        "message": "Synced. 1 file(s) committed, pulled 2 remote commit(s), pushed."})
PUSH_FAILED = json.dumps({"action": "synced", "message": "Synced. 1 file(s) committed, NOT pushed \u2014 the commit "
                                                          "is local only.",
                          "push_error": "Command failed: git push\nfatal: '/gone.git' does not appear to be a git "
                                        "repository\nfatal: Could not read from remote repository."})


def test_a_good_sync_is_told_in_plurs_words():
    answer = read_answer(False, SYNCED_OK)
    assert answer.ok and answer.lines == ("Synced. 1 file(s) committed, pulled 2 remote commit(s), pushed.",)


def test_a_failed_push_is_a_failed_sync_that_kept_the_commit_though_plur_says_no_error():
    answer = read_answer(False, PUSH_FAILED)
    assert not answer.ok
    assert answer.error == "the push failed: fatal: '/gone.git' does not appear to be a git repository"
    assert answer.kept == "your memory is committed here and the next sync pushes it"


def test_a_pull_plur_did_not_make_is_a_failed_sync():
    answer = read_answer(False, json.dumps({"action": "synced", "message": "Synced. NOT pulled \u2014 still 1 commit(s) "
                                                        "behind the remote; resolve locally and retry."}))
    assert not answer.ok and "NOT pulled" in answer.error


def test_an_error_answer_is_one_line_and_a_missing_git_identity_says_how_to_set_it():
    assert read_answer(True, "boom\n  at x").error == "boom at x"
    line = explain("Command failed: git commit\n*** Please tell me who you are.\n")
    assert line.startswith("git does not know who commits here: set `git config --global user.name`")


def test_a_password_in_a_remote_url_is_never_shown():
    state = CallResult("plur_sync_status", True,
                       value=SyncState(True, "https://me:hunter2@example.com/m.git", "main", False, 0, 0))
    lines = status_lines(state, Path("/nonexistent/record.json"), SyncConfig())
    assert "hunter2" not in "\n".join(lines) and lines[0].startswith("sync: https://")


def test_status_says_ahead_behind_dirty_and_when_it_syncs(tmp_path):
    at = tmp_path / "r.json"
    write_record(at, SyncRecord(1_000.0, "tmg memory sync", False, SYNCED_OK))
    state = CallResult("plur_sync_status", True, value=SyncState(True, "/r.git", "master", True, 2, 1))
    lines = status_lines(state, at, SyncConfig(remote="/r.git"))
    assert lines[0] == "sync: /r.git (personal, at each session's end; branch master)"
    assert lines[1] == "  ahead 2 · behind 1 · changes not yet synced"
    assert lines[2].startswith("  last sync: ") and "by tmg memory sync): Synced. 1 file(s) committed, pulled 2" in lines[2]
    other = status_lines(state, at, SyncConfig(remote="/other.git"))
    assert "on `tmg memory sync` only: MEMORY.SYNC.REMOTE does not name it" in other[0]
    assert status_lines(None, at, SyncConfig())[0].startswith("sync: not set up")


def test_the_last_sync_line_says_a_failure_and_what_was_kept():
    line = last_sync_line(SyncRecord(0.0, "the session end", False, PUSH_FAILED), now=3 * 3600)
    assert line.startswith("last sync: FAILED ") and "(3 h ago, by the session end)" in line
    assert line.endswith("; your memory is committed here and the next sync pushes it")


@pytest.mark.parametrize("record, wrote, now, expected", [
    (None, False, 0.0, True),  # never synced
    (SyncRecord(0.0, "x", False, SYNCED_OK), True, 1.0, True),  # wrote: push it
    (SyncRecord(0.0, "x", False, SYNCED_OK), False, 1.0, False),  # nothing new, pulled a moment ago
    (SyncRecord(0.0, "x", False, SYNCED_OK), False, PULL_EVERY_S, True),  # time to pull
    (SyncRecord(0.0, "x", True, "gone"), True, 1.0, False),  # a failure is not retried at once
    (SyncRecord(0.0, "x", True, "gone"), True, PULL_EVERY_S, True),  # but later
])
def test_when_a_session_end_syncs(record, wrote, now, expected):
    assert due(record, wrote, now) is expected


def test_the_record_is_private_per_store_and_a_told_failure_is_kept_until_a_good_sync(tmp_path):
    at = record_path(tmp_path, Path("/u/.plur"))
    assert at != record_path(tmp_path, Path("/v/.plur")) and read_record(at) is None
    write_record(at, SyncRecord(5.0, "tmg memory sync", True, "gone"))
    assert read_record(at) == SyncRecord(5.0, "tmg memory sync", True, "gone")
    assert at.stat().st_mode & 0o077 == 0
    tell(at, "gone")
    assert told(at) == "gone"
    tell(at, None)
    assert told(at) is None


def _git(*args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def filled_remote(tmp_path) -> Path:
    """A bare remote another machine already pushed its store to."""
    bare, other = tmp_path / "m.git", tmp_path / "other"
    _git("init", "-q", "--bare", str(bare))
    other.mkdir()
    (other / "engrams.yaml").write_text("engrams: []\n")
    _git("-C", str(other), "init", "-q")
    _git("-C", str(other), "add", "engrams.yaml")
    _git("-C", str(other), "commit", "-q", "-m", "first")
    _git("-C", str(other), "push", "-q", str(bare), "HEAD:refs/heads/master")
    return bare


def test_joining_a_filled_remote_checks_it_out_and_sets_this_machines_files_aside(tmp_path, filled_remote):
    store = tmp_path / "store"
    store.mkdir()
    (store / "engrams.yaml").write_text("engrams: [{id: ENG-1, statement: mine}]\n")
    (store / "server.pid").write_text("1")
    assert remote_branch(store, str(filled_remote)) == "master"
    assert not tracks(store, str(filled_remote))
    joined = join(store, str(filled_remote), "master")
    assert (store / "engrams.yaml").read_text() == "engrams: []\n"
    assert "mine" in (joined.backup / "engrams.yaml").read_text()
    assert (store / "server.pid").exists()  # machine-local files stay where they are
    assert tracks(store, str(filled_remote))


def test_a_join_that_fails_leaves_the_store_as_it_was(tmp_path, filled_remote):
    store = tmp_path / "store"
    store.mkdir()
    (store / "engrams.yaml").write_text("mine\n")
    from tmg.memory.sync_git import GitError

    with pytest.raises(GitError):
        join(store, str(filled_remote), "no-such-branch")
    assert (store / "engrams.yaml").read_text() == "mine\n"
    assert not (store / "backups").exists() or not any((store / "backups").iterdir())


def test_an_empty_remote_has_no_branch_and_a_gone_one_cannot_be_reached(tmp_path):
    from tmg.memory.sync_git import GitError

    _git("init", "-q", "--bare", str(tmp_path / "e.git"))
    assert remote_branch(tmp_path, str(tmp_path / "e.git")) is None
    with pytest.raises(GitError):
        remote_branch(tmp_path, str(tmp_path / "gone.git"))


def test_the_ignore_block_leaves_only_what_plur_syncs_tracked_once(tmp_path):
    assert ensure_ignored(tmp_path) is False  # no repository PLUR made: nothing to add to
    (tmp_path / ".gitignore").write_text("backups/\n")
    assert ensure_ignored(tmp_path) is True and ensure_ignored(tmp_path) is False
    _git("-C", str(tmp_path), "init", "-q")
    for name in ("engrams.yaml", "server.pid"):
        (tmp_path / name).write_text("x")
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "h.jsonl").write_text("x")
    untracked = _git("-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all")
    assert sorted(line[3:] for line in untracked.splitlines()) == [".gitignore", "engrams.yaml"]
    assert IGNORE_MARK in (tmp_path / ".gitignore").read_text() and "engrams.yaml" in SYNCED
