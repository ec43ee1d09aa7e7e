"""WriteReport: the dead-tool rule and the session-end notice (memory.md §5-§6), fed by real
PlurClient calls against the schema-checking fake (isError) and a raising caller."""

from __future__ import annotations

from tests.support.doubles import FakePlurCaller, ScriptedCaller
from tmg.mcp import McpCallError
from tmg.memory import payloads
from tmg.memory.client import CallResult, PlurClient
from tmg.memory.health import WriteReport

TAGS = payloads.session_tags("s-1", "chat")


def result(tool: str, ok: bool) -> CallResult:
    return CallResult(tool, ok, failure=None if ok else "is_error", error=None if ok else f"{tool}: rejected")


def test_nothing_failed_nothing_printed() -> None:
    report = WriteReport()
    for tool in ("plur_capture", "plur_learn", "plur_learn_batch"):
        report.record(result(tool, True))
    assert report.notice() is None and report.dead_tools() == []


def test_no_calls_at_all_is_not_dead() -> None:
    assert WriteReport().dead_tools() == [] and WriteReport().notice() is None


def test_all_failed_is_dead() -> None:
    report = WriteReport()
    report.record(result("plur_learn_batch", False))
    assert report.dead_tools() == ["plur_learn_batch"]
    assert report.notice() == "memory write failures: 1; plur_learn_batch failing — learning is disabled"


def test_some_failed_is_not_dead_but_still_reported() -> None:
    report = WriteReport()
    report.record(result("plur_capture", False))
    report.record(result("plur_capture", True))
    report.record(result("plur_capture", False))
    assert report.dead_tools() == []
    assert report.notice() == "memory write failures: 2"


def test_partial_drift_names_only_the_dead_tool() -> None:
    report = WriteReport()
    report.record(result("plur_capture", True))
    report.record(result("plur_capture", False))
    report.record(result("plur_learn_batch", False))
    report.record(result("plur_learn_batch", False))
    report.record(result("plur_learn", True))
    assert report.notice() == "memory write failures: 3; plur_learn_batch failing — learning is disabled"


def test_several_dead_tools_are_sorted() -> None:
    report = WriteReport()
    report.record(result("plur_learn_batch", False))
    report.record(result("plur_capture", False))
    assert report.notice() == ("memory write failures: 2; plur_capture failing — learning is disabled; "
                               "plur_learn_batch failing — learning is disabled")


def test_injection_failures_are_apart_and_never_kill_a_write_tool() -> None:
    report = WriteReport()
    report.record(result("plur_inject_hybrid", False))
    report.record(result("plur_recall", False))
    report.record(result("plur_learn", True))
    assert report.injection.failures == 2 and report.failed_writes == 0
    assert report.notice() is None and report.dead_tools() == []


async def test_is_error_and_raise_are_counted_through_the_client() -> None:
    report = WriteReport()
    rejecting = PlurClient(FakePlurCaller("lean", reject=frozenset({"plur_learn_batch"})), on_result=report.record)
    assert not (await rejecting.learn_batch(["a thing"], TAGS)).ok
    assert (await rejecting.capture("fine", "chat", "s-1")).ok
    raising = PlurClient(ScriptedCaller({"plur_learn"}, McpCallError("broken pipe")), on_result=report.record)
    assert not (await raising.learn("Always x", TAGS)).ok
    assert report.writes["plur_learn_batch"].failures == 1
    assert report.writes["plur_learn"].failures == 1 and "broken pipe" in report.writes["plur_learn"].last_error
    assert report.dead_tools() == ["plur_learn", "plur_learn_batch"]
    assert report.notice().startswith("memory write failures: 2; plur_learn failing")


def test_items_a_landed_batch_refused_one_by_one_are_write_failures_but_not_a_dead_tool() -> None:
    from tmg.memory.results import BatchResult

    report = WriteReport()
    refused = BatchResult(("ENG-1", None, None), ({"index": 1, "error": "statement must be a non-empty string"},
                                                  {"index": 2, "error": "Secret detected in statement"}))
    report.record(CallResult("plur_learn_batch", True, value=refused))
    assert report.failed_writes == 2 and report.dead_tools() == []
    assert report.notice() == "memory write failures: 2"
    assert "2 item(s) refused" in report.lines()[0]


def test_a_session_wrote_when_a_write_landed_or_the_broker_took_one_still_in_flight() -> None:
    """What the session end's sync asks (sync_end.due): a write the broker lands after the exit
    is a write of this session, so the session end syncs it."""
    report = WriteReport()
    assert not report.wrote
    report.record(result("plur_learn", False))
    assert not report.wrote  # only failures: nothing new to push
    report.handed += 1  # a plur_learn still in flight, left to the broker (SessionEnd.drain)
    assert report.wrote and report.notice() is not None  # the failure is still told
    landed = WriteReport()
    landed.record(result("plur_learn", True))
    assert landed.wrote
