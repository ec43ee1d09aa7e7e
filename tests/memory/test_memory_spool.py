"""BatchSpool: failed batches on disk, atomically, oldest first, removed once landed."""

from __future__ import annotations

import json

from tmg.memory.spool import BatchSpool

ITEM = {"statement": "Use spaces", "tags": ["session:s-1", "mode:chat"]}


def test_put_then_pending_round_trip(tmp_path) -> None:
    spool = BatchSpool(tmp_path / "spool")
    first = spool.put([ITEM])
    second = spool.put([{"statement": "Second", "scope": "project:x", "tags": []}])
    pending = spool.pending()
    assert [e.path for e in pending] == [first, second]
    assert pending[0].engrams == (ITEM,)
    spool.remove(pending[0])
    assert [e.path for e in spool.pending()] == [second]
    spool.remove(pending[0])  # already gone: harmless


def test_only_batch_item_keys_are_kept_and_blank_items_dropped(tmp_path) -> None:
    spool = BatchSpool(tmp_path)
    spool.put([{"statement": "x", "tags": [], "session_id": "s", "agent": "a"}, {"statement": "  "}, "junk"])
    (entry,) = spool.pending()
    assert entry.engrams == ({"statement": "x", "tags": []},)
    assert spool.put([{"statement": ""}]) is None


def test_writes_leave_no_temp_files(tmp_path) -> None:
    spool = BatchSpool(tmp_path)
    spool.put([ITEM])
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".json")] == []


def test_an_unreadable_file_is_reported_and_left_in_place(tmp_path) -> None:
    warnings: list[str] = []
    spool = BatchSpool(tmp_path, warn=warnings.append)
    bad = tmp_path / "00000000000000000001-1-aaaaaa.json"
    bad.write_text("{torn")
    good = spool.put([ITEM])
    assert [e.path for e in spool.pending()] == [good]
    assert bad.exists() and "unreadable" in warnings[0]


def test_pending_limit_takes_the_oldest(tmp_path) -> None:
    spool = BatchSpool(tmp_path)
    paths = [spool.put([{"statement": f"n{i}", "tags": []}]) for i in range(4)]
    assert [e.path for e in spool.pending(2)] == paths[:2]
    assert json.loads(paths[0].read_text())["engrams"] == [{"statement": "n0", "tags": []}]


def test_no_directory_means_nothing_pending(tmp_path) -> None:
    assert BatchSpool(tmp_path / "missing").pending() == []
