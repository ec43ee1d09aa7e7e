"""The fake's behaviours tmg relies on, in-process: envelopes, profiles, gateway, store, knobs."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from fakeplur.config import FakeConfig, parse_delays
from fakeplur.server import Fake
from tests.support.waiting import finishes

ID = re.compile(r"^ENG-\d{4}-\d{2}-\d{2}-\d{3}$")


def call(fake: Fake, name: str, args: dict) -> tuple[dict, bool, str]:
    text, is_error = fake.dispatch(name, args)
    return json.loads(text), is_error, text


def test_success_is_pretty_json_and_errors_are_compact() -> None:
    fake = Fake(FakeConfig(profile="full"))
    _, is_error, text = call(fake, "plur_learn", {"statement": "Pretty output here"})
    assert not is_error and text.startswith('{\n  "id": "ENG-')
    _, is_error, text = call(fake, "plur_learn", {})
    assert is_error and text.startswith('{"error":"Invalid arguments')


def test_unknown_tool() -> None:
    data, is_error, _ = call(Fake(FakeConfig(profile="full")), "plur_x", {})
    assert is_error and data == {"error": "Unknown tool: plur_x", "success": False}


def test_lean_hides_tools_behind_the_gateway() -> None:
    fake = Fake(FakeConfig(profile="lean"))
    data, is_error, _ = call(fake, "plur_capture", {"summary": "x"})
    assert is_error and "not directly callable" in data["error"] and "plur_admin" in data["hint"]
    data, is_error, _ = call(fake, "plur_admin", {"action": "plur_capture", "args": {"summary": "x"}})
    assert not is_error and data["id"].startswith("EP-")
    data, is_error, text = call(fake, "plur_admin", {"action": "plur_capture", "args": {}})
    assert is_error and data["error"].startswith("plur_capture: Invalid arguments") and text.startswith("{\n")
    assert data["missing_fields"] == ["summary"] and "_isError" not in data
    data, is_error, _ = call(fake, "plur_admin", {"action": "plur_nope"})
    assert is_error and data["error"].startswith('Unknown action "plur_nope". Valid actions: help, ')


def test_learn_ids_and_duplicates() -> None:
    fake = Fake(FakeConfig(profile="full"))
    a, _, _ = call(fake, "plur_learn", {"statement": "Use tabs in Makefiles"})
    b, _, _ = call(fake, "plur_learn", {"statement": "Something else entirely"})
    c, _, _ = call(fake, "plur_learn", {"statement": "use tabs in makefiles."})
    assert ID.match(a["id"]) and int(b["id"][-3:]) == int(a["id"][-3:]) + 1
    assert c["id"] == a["id"] and c["decision"] == "ADD"
    assert a["type"] == "behavioral" and a["scope"] == "global"


def test_learn_rejects_an_empty_statement_like_the_real_one() -> None:
    data, is_error, _ = call(Fake(FakeConfig(profile="full")), "plur_learn", {"statement": ""})
    assert is_error and data == {"error": "plur.learn: statement must be a non-empty string, got string",
                                 "success": False}


def test_batch() -> None:
    fake = Fake(FakeConfig(profile="full"))
    data, is_error, _ = call(fake, "plur_learn_batch", {"engrams": []})
    assert not is_error and data["ids"] == [] and "No engrams provided" in data["warning"]
    first, _, _ = call(fake, "plur_learn", {"statement": "Already known fact"})
    data, _, _ = call(fake, "plur_learn_batch", {"engrams": [
        {"statement": "New line one\nand two", "session_id": "ignored"}, {"statement": "Already known fact"}]})
    assert data["ids"][1] == first["id"] and data["results"][1]["decision"] == "NOOP"
    assert data["results"][0]["statement"] == "New line one and two"  # line breaks folded
    assert data["stats"]["added"] == 1 and data["stats"]["noops"] == 1
    assert "session_id" not in fake.store.engrams[-1]


def test_capture_keeps_session_id_and_timeline_finds_it() -> None:
    fake = Fake(FakeConfig(profile="full"))
    ep, _, _ = call(fake, "plur_capture", {"summary": "talked about otters", "session_id": "s-9", "agent": "chat"})
    assert fake.store.episodes[-1]["session_id"] == "s-9"
    tl, _, _ = call(fake, "plur_timeline", {"search": "OTTERS"})
    assert [e["id"] for e in tl["episodes"]] == [ep["id"]] and tl["episodes"][0]["agent"] == "chat"


def test_recall_returns_full_statements() -> None:
    fake = Fake(FakeConfig(profile="full"))
    long = "Never deploy the payments service on a Friday afternoon because the on-call rotation is thin"
    call(fake, "plur_learn", {"statement": long})
    data, _, _ = call(fake, "plur_recall", {"query": "payments friday"})
    assert [r["statement"] for r in data["results"]] == [long] and data["mode"] == "bm25-only"


def test_status_counts() -> None:
    fake = Fake(FakeConfig(profile="lean"))
    call(fake, "plur_learn", {"statement": "one"})
    data, _, _ = call(fake, "plur_status", {})
    assert data["engram_count"] == 1 and data["episode_count"] == 0 and data["tool_profile"] == "lean"


def test_unimplemented_tool_fails_honestly() -> None:
    data, is_error, _ = call(Fake(FakeConfig(profile="full")), "plur_sync", {})
    assert is_error and "fakeplur does not implement plur_sync" in data["error"]


def test_store_is_written_atomically_and_reloaded(tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    first = Fake(FakeConfig(profile="full", store_path=str(path)))
    call(first, "plur_learn", {"statement": "Persisted across sessions"})
    assert json.loads(path.read_text())["engrams"][0]["statement"] == "Persisted across sessions"
    assert [p.name for p in tmp_path.iterdir()] == ["store.json"]  # no temp files left behind
    second = Fake(FakeConfig(profile="full", store_path=str(path)))
    call(second, "plur_learn", {"statement": "Written by the second"})
    data, _, _ = call(first, "plur_recall", {"query": "second"})  # first sees second's write
    assert [r["statement"] for r in data["results"]] == ["Written by the second"]


def test_seed_preloads_engrams(tmp_path: Path) -> None:
    seed = json.dumps(["Plain seeded statement", {"statement": "Typed seed", "type": "architectural"}])
    fake = Fake(FakeConfig(profile="full", seed=seed))
    assert [(e["statement"], e["type"]) for e in fake.store.engrams] == [
        ("Plain seeded statement", "behavioral"), ("Typed seed", "architectural")]
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(seed)
    assert len(Fake(FakeConfig(profile="full", seed=str(seed_file))).store.engrams) == 2


async def test_reject_knob_answers_is_error_before_doing_anything() -> None:
    fake = Fake(FakeConfig(profile="lean", reject=frozenset({"plur_learn_batch"})))
    text, is_error = await fake.call("plur_admin", {"action": "plur_learn_batch",
                                                    "args": {"engrams": [{"statement": "x"}]}})
    assert is_error and "plur_learn_batch rejected" in text and fake.store.engrams == []
    _, is_error = await fake.call("plur_learn", {"statement": "still works"})
    assert not is_error


async def test_delay_knob() -> None:
    """The configured tool waits its delay before it answers; other tools do not wait."""
    fake = Fake(FakeConfig(profile="full", delays={"plur_learn": 0.2}))
    slept: list[float] = []
    waiting, done_waiting = asyncio.Event(), asyncio.Event()

    async def sleep(seconds: float) -> None:  # records the delay; the test decides when it is over
        slept.append(seconds)
        waiting.set()
        await done_waiting.wait()

    fake.sleep = sleep
    call = asyncio.create_task(fake.call("plur_learn", {"statement": "Learned after the delay"}))
    delayed = asyncio.create_task(waiting.wait())
    await finishes(asyncio.wait({call, delayed}, return_when=asyncio.FIRST_COMPLETED))  # whichever comes first
    assert slept == [0.2] and not call.done() and fake.store.engrams == []  # nothing done during the delay
    done_waiting.set()
    _, is_error = await finishes(call)
    assert not is_error and [e["statement"] for e in fake.store.engrams] == ["Learned after the delay"]
    await fake.call("plur_recall", {"query": "x"})
    assert slept == [0.2]


def test_env_knobs_parse() -> None:
    cfg = FakeConfig.from_env({"PLUR_TOOL_PROFILE": "full", "FAKE_PLUR_REJECT": "plur_learn, plur_capture",
                               "FAKE_PLUR_DELAY": "plur_learn=0.5,*=0.1", "FAKE_PLUR_STORE": "/tmp/x.json"})
    assert cfg.profile == "full" and cfg.reject == {"plur_learn", "plur_capture"}
    assert cfg.delay_for("plur_learn") == 0.5 and cfg.delay_for("plur_status") == 0.1
    assert FakeConfig.from_env({"PLUR_TOOL_PROFILE": "cursor"}).profile == "lean"
    with pytest.raises(ValueError):
        parse_delays("plur_learn")


async def test_log_knob_records_every_call_with_its_real_target(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    fake = Fake(FakeConfig.from_env({"FAKE_PLUR_LOG": str(log), "FAKE_PLUR_REJECT": "plur_capture"}))
    await fake.call("plur_admin", {"action": "plur_learn_batch", "args": {"engrams": [{"statement": "x"}]}})
    await fake.call("plur_admin", {"action": "plur_capture", "args": {"summary": "s"}})
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(c["tool"], c["called"], c["is_error"]) for c in calls] == [
        ("plur_learn_batch", "plur_admin", False), ("plur_capture", "plur_admin", True)]
    assert calls[0]["args"]["args"]["engrams"] == [{"statement": "x"}]


def test_a_fake_that_read_the_store_before_another_wrote_it_never_writes_its_stale_copy_over(tmp_path: Path) -> None:
    """The broker's writer process opens (and seeds) while its first process still takes writes:
    the seed is re-read under the store's lock, and nothing is written when every seed is there."""
    path, seed = tmp_path / "store.json", json.dumps(["Always answer in French", "Deploys go from main"])
    first = Fake(FakeConfig(profile="full", store_path=str(path), seed=seed))
    late = Fake(FakeConfig(profile="full", store_path=str(path)))  # read the file before the forget below
    (french,) = [e["id"] for e in first.store.engrams if e["statement"].startswith("Always")]
    assert first.dispatch("plur_forget", {"id": french})[1] is False
    written = path.stat().st_ino
    late._seed(json.loads(seed))
    assert path.stat().st_ino == written  # every seed was there: the file was left alone
    Fake(FakeConfig(profile="full", store_path=str(path), seed=seed))  # a seed forgotten stays forgotten
    statuses = {e["statement"]: e["status"] for e in json.loads(path.read_text())["engrams"]}
    assert statuses == {"Always answer in French": "retired", "Deploys go from main": "active"}
