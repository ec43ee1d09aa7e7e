"""Seam B: classification, each tier's exact payloads (validated by the schema-checking fake),
and the batch ring (memory.md §4). What the full tier learns: test_memory_learning_full.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.doubles import FakePlurCaller, GatedCaller
from tests.support.waiting import finishes
from tmg.engine.turn import Turn
from tmg.llm.gateway import Completion, ErrorKind, GatewayError, ToolCallRequest, Usage
from tmg.memory.client import PlurClient
from tmg.memory.health import WriteReport
from tmg.memory.learning import LearningHook
from tmg.memory.turn_episode import classify, content_text
from tmg.memory.lock import WriteLock
from tmg.memory.runtime import ReadyClient
from tmg.memory.scrub import make_scrubber
from tmg.memory.spool import BatchSpool

SID = "20260101-120000-abcd"


def turn(user: str = "hello", text: str | None = "an answer", *, prompt_id: int = 1, index: int = 1,
         tool_calls: bool = False, mode: str = "chat", stored: list[dict[str, Any]] | None = None) -> Turn:
    t = Turn(prompt_id, index, user, SID, mode)
    if text is not None or tool_calls:
        calls = [ToolCallRequest("c1", "read_file", "{}")] if tool_calls else []
        t.completion = Completion(text or "", calls, Usage())
    t.stored = stored or []
    return t


def hook_for(live, caller: Any, report: WriteReport | None = None, **kw: Any) -> LearningHook:
    client = PlurClient(caller, on_result=report.record if report else None)
    return LearningHook(ReadyClient(client), live, **kw)


def sent(caller: FakePlurCaller, tool: str) -> list[dict[str, Any]]:
    """Payloads that reached `tool`, directly or through plur_admin, all schema-checked by the fake."""
    out = []
    for name, args, _ in caller.calls:
        if name == tool:
            out.append(args)
        elif name == "plur_admin" and args.get("action") == tool:
            out.append(args["args"])
    return out


async def settle(hook: LearningHook) -> None:
    await hook.drain(5)


# -- classification ---------------------------------------------------------------------------

def test_a_response_is_its_text() -> None:
    assert classify(turn(text="Use spaces."), None).text == "Use spaces."


def test_a_response_wins_over_a_later_error() -> None:
    assert classify(turn(text="partial"), RuntimeError("tool blew up")).text == "partial"


def test_no_response_and_an_error_is_an_error_episode() -> None:
    ep = classify(turn("deploy it", text=None), GatewayError(ErrorKind.AUTH, "bad key"))
    assert ep.text is None and ep.error == "bad key" and ep.prompt == "deploy it"
    assert ep.summary == "error: bad key | user: deploy it"


@pytest.mark.parametrize("error", [
    GatewayError(ErrorKind.RATE_LIMIT, "slow down"),
    GatewayError(ErrorKind.TRANSIENT, "503"),
    asyncio.TimeoutError(),
    TimeoutError("read timeout"),
    asyncio.CancelledError(),
])
def test_transient_errors_and_interrupts_are_skipped(error) -> None:
    assert classify(turn(text=None), error) is None


def test_terminal_errors_are_not_transient() -> None:
    assert classify(turn(text=None), GatewayError(ErrorKind.TERMINAL, "400 bad request")) is not None


def test_tool_call_only_turn_is_skipped() -> None:
    assert classify(turn(text="", tool_calls=True), None) is None


def test_neither_takes_the_last_stored_model_message_without_thoughts() -> None:
    stored = [{"role": "assistant", "content": [
        {"type": "thinking", "text": "secret musing"},
        {"type": "text", "text": "first"},
        {"type": "text", "text": "thought", "thought": True},
        {"type": "text", "text": "second"},
    ]}, {"role": "tool", "tool_call_id": "c1", "content": "file body"}]
    assert classify(turn(text=None, stored=stored), None).text == "first\nsecond"
    only_calls = [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}]
    assert classify(turn(text=None, stored=only_calls), None) is None
    assert content_text("plain") == "plain"


# -- tiers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["lean", "full"])
async def test_capture_sends_exactly_summary_agent_session_id(live, profile) -> None:
    live.set(learn="capture")
    caller = FakePlurCaller(profile)
    report = WriteReport()
    hook = hook_for(live, caller, report)
    await hook.after_turn(turn(text="Use spaces in YAML.", mode="ops"), None)
    await hook.after_turn(turn("deploy", text=None), GatewayError(ErrorKind.AUTH, "bad key"))
    await hook.after_turn(turn(text=None), GatewayError(ErrorKind.RATE_LIMIT, "429"))  # skipped
    await hook.after_turn(turn(text="", tool_calls=True), None)  # skipped
    await settle(hook)
    assert sent(caller, "plur_capture") == [
        {"summary": "Use spaces in YAML.", "agent": "ops", "session_id": SID},
        {"summary": "error: bad key | user: deploy", "agent": "chat", "session_id": SID},
    ]
    assert report.writes["plur_capture"].attempts == 2 and report.failed_writes == 0
    assert hook.batch(SID) == []


async def test_capture_summary_is_bounded_at_a_character_boundary(live) -> None:
    live.set(learn="capture")
    caller = FakePlurCaller("full")
    hook = hook_for(live, caller)
    await hook.after_turn(turn(text="é" * 1500), None)
    await settle(hook)
    (payload,) = sent(caller, "plur_capture")
    assert len(payload["summary"].encode()) == 2000 and set(payload["summary"]) == {"é"}


async def test_the_write_is_detached_the_turn_does_not_wait_for_it(live) -> None:
    live.set(learn="capture")
    caller = GatedCaller("full")  # holds the write until the test opens the gate
    hook = hook_for(live, caller)
    turn_hook = asyncio.create_task(hook.after_turn(turn(), None))
    await finishes(caller.entered.wait())  # the write has reached the server and is held there
    assert turn_hook.done() and hook.pending == 1 and sent(caller, "plur_capture") == []
    caller.gate.set()
    await settle(hook)
    assert hook.pending == 0 and len(sent(caller, "plur_capture")) == 1


async def test_batch_collects_learnable_text_and_sends_nothing_per_turn(live) -> None:
    live.set(learn="batch", scope="project:x")
    caller = FakePlurCaller("full")
    hook = hook_for(live, caller)
    await hook.after_turn(turn(text="Use spaces in YAML.", mode="ops"), None)
    await hook.after_turn(turn(text="   \n"), None)  # blank: skipped at append
    await hook.after_turn(turn(text=None), GatewayError(ErrorKind.AUTH, "bad key"))  # errors never enter
    await hook.after_turn(turn(text="", tool_calls=True), None)
    await settle(hook)
    assert caller.calls == []
    assert hook.batch(SID) == [{"statement": "Use spaces in YAML.", "scope": "project:x",
                                "tags": [f"session:{SID}", "mode:ops", "origin:answer"],
                                "source": "tmg: a model's answer (may be wrong)"}]


async def test_the_ring_keeps_the_last_20_each_cut_to_2000_bytes(live) -> None:
    hook = hook_for(live, FakePlurCaller("full"))
    for i in range(25):
        await hook.after_turn(turn(text=f"answer {i} " + "x" * 3000), None)
    ring = hook.batch(SID)
    assert len(ring) == 20
    assert ring[0]["statement"].startswith("answer 5 ") and ring[-1]["statement"].startswith("answer 24 ")
    assert all(len(item["statement"].encode()) == 2000 for item in ring)
    assert hook.take_batch(SID) == ring and hook.batch(SID) == []


async def test_error_episodes_never_evict_learnable_ones(live) -> None:
    hook = hook_for(live, FakePlurCaller("full"))
    await hook.after_turn(turn(text="keep me"), None)
    for _ in range(30):
        await hook.after_turn(turn(text=None), GatewayError(ErrorKind.TERMINAL, "boom"))
    assert [i["statement"] for i in hook.batch(SID)] == ["keep me"]


async def test_tiers_are_read_from_the_live_config_every_turn(live) -> None:
    caller = FakePlurCaller("full")
    hook = hook_for(live, caller)
    live.set(learn="off")
    await hook.after_turn(turn(text="one"), None)
    live.set(learn="capture")
    await hook.after_turn(turn(text="two"), None)
    live.set(learn="batch")
    await hook.after_turn(turn(text="three"), None)
    live.set(enabled=False, learn="capture")
    await hook.after_turn(turn(text="four"), None)
    await settle(hook)
    assert [p["summary"] for p in sent(caller, "plur_capture")] == ["two"]
    assert [i["statement"] for i in hook.batch(SID)] == ["three"]


async def test_is_error_on_capture_and_learn_is_counted_as_a_failure(live) -> None:
    live.set(learn="capture")
    caller = FakePlurCaller("lean", reject=frozenset({"plur_capture", "plur_learn"}))
    report = WriteReport()
    hook = hook_for(live, caller, report)
    await hook.after_turn(turn(text="x"), None)
    live.set(learn="full")
    await hook.after_turn(turn("always test your code before you show it to me", text="y", prompt_id=2), None)
    await settle(hook)
    # full writes no capture of its own: one refused capture (capture tier), one refused learn
    assert report.writes["plur_capture"].failures == 1 and report.writes["plur_learn"].failures == 1
    assert report.dead_tools() == ["plur_capture", "plur_learn"]
    assert hook.statements == {}


async def test_no_live_server_writes_nothing_and_does_not_raise(live) -> None:
    live.set(learn="batch")
    hook = LearningHook(ReadyClient(None), live)
    await hook.after_turn(turn("never do that", text="ok"), None)
    await settle(hook)
    assert hook.pending == 0 and len(hook.batch(SID)) == 1


async def test_a_capture_refused_by_the_server_is_spooled_for_a_later_session(live, tmp_path) -> None:
    live.set(learn="capture")
    spool = BatchSpool(tmp_path)
    caller = FakePlurCaller("lean", reject=frozenset({"plur_capture"}))
    hook = hook_for(live, caller, spool=spool)
    await hook.after_turn(turn(text="An episode worth keeping."), None)
    await settle(hook)
    (entry,) = spool.pending()
    assert entry.kind == "capture" and entry.write["summary"] == "An episode worth keeping."


async def test_drain_is_bounded_and_cancels_what_is_left(live) -> None:
    live.set(learn="capture")
    caller = GatedCaller("full")  # the gate never opens: the write would wait forever
    hook = LearningHook(ReadyClient(PlurClient(caller, timeout=3600)), live)
    await hook.after_turn(turn(), None)
    await finishes(caller.entered.wait())
    await finishes(hook.drain(0.1))  # returns on its own bound, not the write's
    assert hook.pending == 0 and caller.cancelled == 1 and sent(caller, "plur_capture") == []


async def test_a_memory_block_the_model_repeats_is_never_learned(live) -> None:
    live.set(learn="batch")
    hook = hook_for(live, FakePlurCaller("full"))
    echoed = "Use spaces.\n\n## PLUR MEMORY\nNotes from earlier sessions (...):\n- Never use tabs\n[/PLUR-MEMORY]"
    await hook.after_turn(turn(text=echoed), None)
    await hook.after_turn(turn(text="## PLUR MEMORY\n- only the block\n[/PLUR-MEMORY]", prompt_id=2), None)
    assert [i["statement"] for i in hook.batch(SID)] == ["Use spaces."]
