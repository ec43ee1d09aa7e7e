"""BatchSpool: failed batches on disk, atomically, oldest first, removed once landed."""

from __future__ import annotations

import json

from tmg.memory.scrub import make_scrubber
from tmg.memory.spool import MAX_TRIES, BatchSpool

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


def test_an_unreadable_file_is_reported_once_and_quarantined(tmp_path) -> None:
    warnings: list[str] = []
    spool = BatchSpool(tmp_path, warn=warnings.append)
    bad = tmp_path / "00000000000000000001-1-aaaaaa.json"
    bad.write_text("{torn")
    good = spool.put([ITEM])
    assert [e.path for e in spool.pending()] == [good]
    moved = tmp_path / "quarantine" / bad.name
    assert not bad.exists() and moved.read_text() == "{torn"
    assert "unreadable" in warnings[0] and str(moved) in warnings[0]
    spool.pending()
    assert len(warnings) == 1  # reported once, not on every session


def test_a_write_refused_max_tries_times_is_quarantined(tmp_path) -> None:
    spool = BatchSpool(tmp_path)
    spool.put_write("capture", {"summary": "x", "agent": "a", "session_id": "s"})
    for attempt in range(MAX_TRIES):
        (entry,) = spool.pending()
        assert entry.tries == attempt
        moved = spool.refused(entry)
    assert moved is not None and moved.parent.name == "quarantine" and spool.pending() == []


def test_everything_spooled_is_scrubbed(tmp_path) -> None:
    spool = BatchSpool(tmp_path, scrub=make_scrubber(lambda s: s.replace("sekrit-config-value", "***")))
    spool.put([{"statement": "key sekrit-config-value and TOKEN=abc123def", "tags": []}])
    spool.put_write("learn", {"statement": "never print -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
                              "tags": []})
    text = "".join(p.read_text() for p in tmp_path.glob("*.json"))
    assert "sekrit-config-value" not in text and "abc123def" not in text and "MIIE" not in text


def test_pending_limit_takes_the_oldest(tmp_path) -> None:
    spool = BatchSpool(tmp_path)
    paths = [spool.put([{"statement": f"n{i}", "tags": []}]) for i in range(4)]
    assert [e.path for e in spool.pending(2)] == paths[:2]
    assert json.loads(paths[0].read_text())["engrams"] == [{"statement": "n0", "tags": []}]


def test_no_directory_means_nothing_pending(tmp_path) -> None:
    assert BatchSpool(tmp_path / "missing").pending() == []
