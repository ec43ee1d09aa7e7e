"""Temp files of memory's atomic writes: a dead writer's are picked up or cleaned, a live
writer's are left alone (issue 9, defect 5)."""

from __future__ import annotations

import json
import os

from tmg.memory.pending import orphans
from tmg.memory.spool import BatchSpool
from tmg.memory.tempfiles import claim, create_locked

ITEM = {"statement": "the heron keys rotate every ninety days", "tags": ["s1"]}


def test_a_ring_rewrite_killed_before_its_rename_is_an_orphan(tmp_path):
    root = tmp_path / "pending"
    root.mkdir()
    (root / "s1-123-abcd.tmp").write_text(json.dumps(ITEM) + "\n")  # the writer died here
    found = orphans(root, ring_size=20)
    assert [o.items for o in found] == [[ITEM]]
    found[0].remove()
    assert list(root.iterdir()) == []


def test_a_ring_temp_file_still_being_written_is_left_alone(tmp_path):
    root = tmp_path / "pending"
    root.mkdir()
    fd = create_locked(root / "s1-123-abcd.tmp")  # a live writer holds it
    try:
        os.write(fd, (json.dumps(ITEM) + "\n").encode())
        assert orphans(root, ring_size=20) == []
        assert (root / "s1-123-abcd.tmp").exists()
    finally:
        os.close(fd)


def test_the_spool_sweep_removes_a_dead_writers_temp_file_only(tmp_path):
    spool = BatchSpool(tmp_path)
    spool.put([ITEM])
    dead = tmp_path / ".0001-1-aa.json.tmp"
    dead.write_text('{"version": 1, "engrams": [')
    live = tmp_path / ".0002-2-bb.json.tmp"
    fd = create_locked(live)
    try:
        assert spool.sweep() == 1
        assert not dead.exists() and live.exists()
    finally:
        os.close(fd)
    assert [e.engrams for e in spool.pending()] == [(ITEM,)]  # the real spool file is untouched


def test_create_locked_survives_a_scan_that_removed_the_file_before_the_lock(tmp_path):
    path = tmp_path / "x.tmp"
    fd = create_locked(path)
    try:
        assert claim(path) is None  # ours: locked
    finally:
        os.close(fd)
    fd = claim(path)  # the writer is gone now
    assert fd is not None
    os.close(fd)
