"""PlurClient: bounded calls, raise OR isError = failure on every call path, typed results."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakeplur.snapshot import load_snapshot
from tests.support.doubles import FakePlurCaller, GatedCaller, ScriptedCaller
from tests.support.waiting import finishes
from tmg.mcp import McpCallError, ToolOutcome
from tmg.memory import payloads
from tmg.memory.client import CallResult, PlurClient

TAGS = payloads.session_tags("s-1", "chat")
ALL_TOOLS = {t["name"] for t in load_snapshot().tools("full")}
LEAN_TOOLS = {t["name"] for t in load_snapshot().tools("lean")}

# Every public call path, as (tool, coroutine factory).
CALLS: list[tuple[str, Any]] = [
    ("plur_inject_hybrid", lambda c: c.inject("deploy payments", 2000)),
    ("plur_capture", lambda c: c.capture("an answer", "chat", "s-1")),
    ("plur_learn", lambda c: c.learn("Always run the linter", TAGS)),
    ("plur_learn_batch", lambda c: c.learn_batch(["one thing", "another"], TAGS)),
    ("plur_recall", lambda c: c.recall("linter")),
    ("plur_status", lambda c: c.status()),
    ("plur_timeline", lambda c: c.timeline(search="answer")),
]
IDS = [tool for tool, _ in CALLS]


@pytest.mark.parametrize("profile", ["lean", "full"])
@pytest.mark.parametrize("tool,make", CALLS, ids=IDS)
async def test_every_call_succeeds_against_the_schema_checking_fake(profile, tool, make) -> None:
    caller = FakePlurCaller(profile)
    result = await make(PlurClient(caller))
    assert result.ok, result
    assert result.tool == tool
    name, arguments, timeout = caller.calls[-1]
    assert timeout == 3.0
    if profile == "lean" and tool not in LEAN_TOOLS:
        assert name == "plur_admin" and arguments["action"] == tool
    else:
        assert name == tool


@pytest.mark.parametrize("tool,make", CALLS, ids=IDS)
async def test_is_error_is_a_failure_on_every_path(tool, make) -> None:
    caller = FakePlurCaller("lean", reject=frozenset({tool}))
    result = await make(PlurClient(caller))
    assert not result.ok and result.failure == "is_error"
    assert "rejected" in (result.error or "")


@pytest.mark.parametrize("tool,make", CALLS, ids=IDS)
async def test_a_raise_is_a_failure_on_every_path(tool, make) -> None:
    caller = ScriptedCaller(ALL_TOOLS, McpCallError("broken pipe"))
    result = await make(PlurClient(caller))
    assert not result.ok and result.failure == "raised" and "broken pipe" in result.error


@pytest.mark.parametrize("tool,make", CALLS, ids=IDS)
async def test_a_hang_is_bounded_on_every_path(tool, make) -> None:
    caller = GatedCaller("full")  # never answers, and ignores the timeout it is given
    result = await finishes(make(PlurClient(caller, timeout=0.05)))
    assert not result.ok and result.failure == "timeout"
    assert caller.cancelled == 1  # the hung call was abandoned, not left running


@pytest.mark.parametrize("tool,make", CALLS, ids=IDS)
async def test_is_error_with_success_shaped_text_is_still_a_failure(tool, make) -> None:
    """isError wins over a body that would parse: never mistake an error for a result."""
    body = '{"id": "ENG-2026-01-01-001", "ids": [], "results": [], "injected_ids": [], "episodes": [],' \
           ' "engram_count": 1, "episode_count": 1}'
    caller = ScriptedCaller(ALL_TOOLS, ToolOutcome.from_text(body, is_error=True))
    result = await make(PlurClient(caller))
    assert not result.ok and result.failure == "is_error"


@pytest.mark.parametrize("tool,make", CALLS, ids=IDS)
async def test_an_unexpected_shape_is_a_failure(tool, make) -> None:
    caller = ScriptedCaller(ALL_TOOLS, ToolOutcome.from_text("all good!", is_error=False))
    result = await make(PlurClient(caller))
    assert not result.ok and result.failure == "bad_result"


async def test_a_malformed_inject_count_is_a_failed_recall_not_a_crash() -> None:
    body = json.dumps({"directives": "", "consider": "", "injected_ids": [], "count": "many", "tokens_used": 0})
    result = await PlurClient(ScriptedCaller(ALL_TOOLS, ToolOutcome.from_text(body, is_error=False))).inject("x", 100)
    assert not result.ok and result.failure == "bad_result" and "count" in (result.error or "")


async def test_a_parser_that_trips_on_any_exception_is_a_failed_result() -> None:
    def parse(_data: Any) -> int:
        raise TypeError("unforeseen shape")

    caller = ScriptedCaller(ALL_TOOLS, ToolOutcome.from_text("{}", is_error=False))
    result = await finishes(PlurClient(caller).call("plur_status", {}, parse))
    assert not result.ok and result.failure == "bad_result" and "TypeError: unforeseen shape" in (result.error or "")


async def test_unreachable_tool_fails_without_calling() -> None:
    caller = ScriptedCaller({"plur_learn", "plur_recall"}, ToolOutcome.from_text("{}", is_error=False))
    result = await PlurClient(caller).capture("x", "chat", "s")
    assert not result.ok and result.failure == "unavailable" and caller.calls == []


async def test_validation_error_names_the_missing_fields() -> None:
    caller = FakePlurCaller("full")
    client = PlurClient(caller)
    result = await client.call("plur_capture", {"agent": "chat"}, lambda d: d)
    assert result.failure == "is_error"
    assert result.server_error.missing_fields == ("summary",)
    assert result.server_error.received_fields == ("agent",)


async def test_every_call_is_reported_to_the_observer() -> None:
    seen: list[CallResult[Any]] = []
    caller = FakePlurCaller("full", reject=frozenset({"plur_learn_batch"}))
    client = PlurClient(caller, on_result=seen.append)
    await client.learn("Always x", TAGS)
    await client.learn_batch(["y"], TAGS)
    assert [(r.tool, r.ok) for r in seen] == [("plur_learn", True), ("plur_learn_batch", False)]


async def test_empty_batch_is_never_sent() -> None:
    caller = FakePlurCaller("full")
    with pytest.raises(payloads.EmptyBatchError):
        await PlurClient(caller).learn_batch(["  "], TAGS)
    assert caller.calls == []


async def test_typed_values() -> None:
    client = PlurClient(FakePlurCaller("lean"))
    learned = await client.learn("Never indent YAML with tabs", TAGS)
    again = await client.learn("never indent yaml with tabs!", TAGS)
    assert learned.value.startswith("ENG-") and again.value == learned.value
    batch = await client.learn_batch(["The ledger owns invoices"], TAGS)
    assert batch.value.ids[0] != learned.value
    injected = await client.inject("yaml tabs ledger invoices", 2000)
    assert set(injected.value.injected_ids) == {learned.value, batch.value.ids[0]}
    # Both are behavioral: selected, yet neither bucket carries their words.
    assert set(injected.value.ids_without_text) == set(injected.value.injected_ids)
    recalled = await client.recall("yaml tabs")
    assert [e.statement for e in recalled.value] == ["Never indent YAML with tabs"]
