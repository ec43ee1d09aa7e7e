"""Forgetting an episode in PLUR's own episodes file (PLUR 0.20.0 has no tool for it): only that
episode's lines go, under PLUR's own lock protocol, and a file not laid out as PLUR writes it is
left untouched. The e2e leg (test_memory_private.py) has the real server read the result."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest
import yaml

from tmg.memory.episodes import EpisodeError, forget_episode, plur_lock

# Written by the real @plur-ai/mcp 0.20.0 (plur_capture x 4): a block scalar, a folded one, quoting.
EPISODES = """\
- id: EP-1796156653018-vj3e
  summary: |-
    The staging password is Tr0ub4dor&3 and the host is db1.
    Second line: with colon 'quote'
  agent: default
  session_id: s1
  timestamp: '2026-12-01T20:24:13.018Z'
- id: EP-1796156653034-xcnt
  summary: >-
    A long answer word word word word word word word word word word word word word word word word word word word word
    word word word
  agent: default
  session_id: s1
  timestamp: '2026-12-01T20:24:13.034Z'
- id: EP-1796156653067-jo3p
  summary: '- starts with dash: yes'
  agent: default
  session_id: s1
  timestamp: '2026-12-01T20:24:13.067Z'
- id: EP-1796156653086-rewy
  summary: 'key: value # not a comment'
  agent: default
  session_id: s1
  timestamp: '2026-12-01T20:24:13.086Z'
"""


@pytest.fixture
def store(tmp_path):
    root = tmp_path / ".plur"
    root.mkdir()
    (root / "episodes.yaml").write_text(EPISODES)
    os.chmod(root / "episodes.yaml", 0o600)
    return root


def test_only_that_episodes_lines_go_and_the_rest_stays_byte_for_byte(store) -> None:
    summary = forget_episode(store, "EP-1796156653018-vj3e")
    assert summary.startswith("The staging password is Tr0ub4dor&3")
    text = (store / "episodes.yaml").read_text()
    assert "Tr0ub4dor" not in text and text == EPISODES[EPISODES.index("- id: EP-1796156653034-xcnt"):]
    assert [e["id"] for e in yaml.safe_load(text)] == ["EP-1796156653034-xcnt", "EP-1796156653067-jo3p",
                                                       "EP-1796156653086-rewy"]
    assert os.stat(store / "episodes.yaml").st_mode & 0o777 == 0o600
    assert not (store / "episodes.yaml.lock").exists()  # released
    forget_episode(store, "EP-1796156653086-rewy")  # the last one
    forget_episode(store, "EP-1796156653034-xcnt")
    forget_episode(store, "EP-1796156653067-jo3p")
    assert (store / "episodes.yaml").read_text() == "[]\n"  # PLUR refuses an empty file as unreadable


def test_an_unknown_episode_or_a_store_without_the_file_is_said_and_nothing_changes(store, tmp_path) -> None:
    with pytest.raises(EpisodeError, match="no episode EP-0"):
        forget_episode(store, "EP-0")
    assert (store / "episodes.yaml").read_text() == EPISODES
    with pytest.raises(EpisodeError, match="keeps no episodes.yaml"):
        forget_episode(tmp_path / "elsewhere", "EP-1796156653018-vj3e")


def test_a_file_not_laid_out_as_plur_writes_it_is_left_untouched(store) -> None:
    odd = "- id: EP-1\n  summary: one\n- id: EP-2\n  summary: two\n- id: EP-1\n  summary: the same id again\n"
    (store / "episodes.yaml").write_text(odd)
    with pytest.raises(EpisodeError, match="not laid out as PLUR writes it"):
        forget_episode(store, "EP-1")
    assert (store / "episodes.yaml").read_text() == odd


def test_a_lock_held_by_a_live_process_is_waited_for_then_said(store) -> None:
    lock = store / "episodes.yaml.lock"
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock.write_text(f"{socket.gethostname()}:{holder.pid}:{int(time.time() * 1000)}:0")
        with pytest.raises(EpisodeError, match=f"being written by process {holder.pid}"):
            forget_episode(store, "EP-1796156653018-vj3e", wait=0.2)
        assert (store / "episodes.yaml").read_text() == EPISODES and lock.exists()
        # Released while we wait: we go ahead.
        threading.Timer(0.2, lock.unlink).start()
        forget_episode(store, "EP-1796156653018-vj3e", wait=5)
    finally:
        holder.kill()
        holder.wait()
    assert "EP-1796156653018-vj3e" not in (store / "episodes.yaml").read_text()


def test_a_lock_left_by_a_dead_process_is_taken_over_as_plur_does(store) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (store / "episodes.yaml.lock").write_text(f"{socket.gethostname()}:{dead.pid}:1:0")
    forget_episode(store, "EP-1796156653018-vj3e", wait=0.5)
    assert not list(store.glob("episodes.yaml.lock*"))


def test_while_tmg_holds_the_lock_the_file_names_this_process(store) -> None:
    with plur_lock(store / "episodes.yaml"):
        holder = (store / "episodes.yaml.lock").read_text().split(":")
        assert holder[0] == socket.gethostname() and holder[1] == str(os.getpid())
    assert not (store / "episodes.yaml.lock").exists()
