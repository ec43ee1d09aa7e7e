"""Append-only JSONL history: durable appends, torn lines, never a rewrite on append."""

from __future__ import annotations

import json

from tmg.session.history import History


def test_append_then_reload(tmp_path):
    path = tmp_path / "h.jsonl"
    h = History(path)
    h.append({"role": "user", "content": "héllo"})
    h.append({"role": "assistant", "content": "hi"})
    h.sync()
    h.close()
    again = History(path)
    assert [m["content"] for m in again.messages] == ["héllo", "hi"]
    assert all(isinstance(m["ts"], float) for m in again.messages)


def test_append_does_not_rewrite_earlier_lines(tmp_path):
    path = tmp_path / "h.jsonl"
    h = History(path)
    for i in range(50):
        h.append({"role": "user", "content": f"m{i}"})
    before = path.read_bytes()
    inode = path.stat().st_ino
    h.append({"role": "user", "content": "last"})
    after = path.read_bytes()
    assert after.startswith(before) and path.stat().st_ino == inode
    assert after[len(before):].count(b"\n") == 1


def test_torn_last_line_is_skipped_with_a_warning_and_the_rest_kept(tmp_path):
    path = tmp_path / "h.jsonl"
    good = [json.dumps({"role": "user", "content": f"m{i}"}) for i in range(3)]
    path.write_text("\n".join(good) + '\n{"role": "assistant", "content": "cut of')
    warnings: list[str] = []
    h = History(path, warn=warnings.append)
    assert [m["content"] for m in h.messages] == ["m0", "m1", "m2"]
    assert len(warnings) == 1 and "torn last line" in warnings[0]
    h.append({"role": "assistant", "content": "after"})
    h.close()
    assert [m["content"] for m in History(path).messages] == ["m0", "m1", "m2", "after"]


def test_readers_do_not_repair_the_file(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"role":"user","content":"a"}\n{"role":')
    before = path.read_bytes()
    History(path, writable=False)
    assert path.read_bytes() == before


def test_malformed_middle_line_is_skipped_not_fatal(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"role":"user","content":"a"}\nnot json\n[1,2]\n{"role":"assistant","content":"b"}\n')
    warnings: list[str] = []
    h = History(path, warn=warnings.append)
    assert [m["content"] for m in h.messages] == ["a", "b"]
    assert len(warnings) == 2 and "malformed line 2" in warnings[0]


def test_replace_all_is_atomic_and_appends_continue(tmp_path):
    path = tmp_path / "h.jsonl"
    h = History(path)
    h.append({"role": "user", "content": "a"})
    h.replace_all([{"role": "user", "content": "A"}])
    h.append({"role": "user", "content": "b"})
    h.close()
    assert [m["content"] for m in History(path).messages] == ["A", "b"]



def test_a_whole_last_record_without_its_newline_is_kept(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_text('{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}')
    warnings: list[str] = []
    h = History(path, warn=warnings.append)
    h.append({"role": "user", "content": "c"})
    h.close()
    assert warnings == []
    assert [m["content"] for m in History(path).messages] == ["a", "b", "c"]


def test_sync_makes_the_turn_durable_with_fsync(tmp_path, monkeypatch):
    import os

    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    h = History(tmp_path / "h.jsonl")
    h.sync()  # nothing appended yet: nothing to sync
    assert synced == []
    h.append({"role": "user", "content": "a"})
    h.sync()
    assert len(synced) == 1 and synced[0] == h._file.fileno()


def test_a_rewrite_killed_before_its_rename_leaves_no_temp_file_after_the_next_load(tmp_path):
    path = tmp_path / "history.jsonl"
    History(path).append({"role": "user", "content": "kept"})
    tmp = tmp_path / "history.jsonl.tmp"
    tmp.write_text('{"role":"user","content":"half a rewr')
    History(path, writable=False)
    assert tmp.exists()  # a reader (`tmg -t`) touches nothing
    assert [m["content"] for m in History(path).messages] == ["kept"]
    assert not tmp.exists()
