"""Where the broker sends a memory call (tmg/broker/calls.py, Child.call): reads to PLUR's read
process, writes to its writer one at a time, and the pinned list to the writer without counting as
a write. The processes are stood in for at their pipe (`request`); the real PLUR behind them runs in
bench/memory_scale.py and the e2e files on the broker (team stores, rewind, sync)."""

from __future__ import annotations

import asyncio
from typing import Any

from tmg.broker.calls import lists_pinned, tool_arguments, tool_name
from tmg.broker.child import Child, Spec
from tmg.broker.reinforce import Reinforcement

LIST = {"name": "plur_pin", "arguments": {"list": True}}
LIST_LEAN = {"name": "plur_admin", "arguments": {"action": "plur_pin", "args": {"list": True}}}
INJECT = {"name": "plur_admin", "arguments": {"action": "plur_inject_hybrid", "args": {"task": "t", "budget": 9}}}
LEARN = {"name": "plur_admin", "arguments": {"action": "plur_learn", "args": {"statement": "s"}}}


class _Process(Child):
    """A Child whose process is up and answers each request as `answer` says (recorded)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[dict[str, Any]] = []
        self.gate: asyncio.Event | None = None  # set: the request waits for it

    @property
    def ready(self) -> bool:
        return True

    async def ensure(self) -> None:
        return None

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(params)
        if self.gate is not None:
            await self.gate.wait()
        return {"content": []}


def _pair() -> tuple[_Process, _Process, list[str]]:
    spec = Spec(command="node", args=("plur",), env=(("HOME", "/h"),), cwd="/")
    writes: list[str] = []
    writer = _Process(spec, None)
    reader = _Process(spec, asyncio.Lock(), lambda: writes.append("edge"), writer)
    reader.reinforcement = Reinforcement(reader.replay, reader.warm, idle=600)
    return reader, writer, writes


def test_the_pinned_list_is_known_directly_and_through_the_lean_gateway():
    assert lists_pinned(LIST) and lists_pinned(LIST_LEAN)
    assert not lists_pinned({"name": "plur_pin", "arguments": {"id": "ENG-1", "pinned": True}})
    assert not lists_pinned({"name": "plur_admin", "arguments": {"action": "plur_pin", "args": {"id": "ENG-1"}}})
    assert not lists_pinned({"name": "plur_admin", "arguments": {"action": "plur_pin", "args": "list"}})
    assert tool_name(LIST_LEAN) == "plur_pin" and tool_arguments(LIST_LEAN) == {"list": True}


async def test_the_pinned_list_goes_to_the_writer_after_a_write_but_is_no_write_itself():
    reader, writer, writes = _pair()
    await reader.call(INJECT)
    await reader.call(LIST_LEAN)
    assert reader.sent == [INJECT] and writer.sent == [LIST_LEAN] and writes == []
    writer.gate = asyncio.Event()
    learn = asyncio.ensure_future(reader.call(LEARN))
    await asyncio.sleep(0.01)
    listing = asyncio.ensure_future(reader.call(LIST_LEAN))
    await asyncio.sleep(0.01)
    assert writer.sent == [LIST_LEAN, LEARN]  # the list waits for the write before it: it sees what was learned
    writer.gate.set()
    writer.gate = None
    await asyncio.gather(learn, listing)
    await reader._heating  # the write warmed both processes: the read process's parse, and the writer's
    assert writes == ["edge", "edge"]  # the learn dropped the read cache (its start and end); the list did not
    assert reader.sent == [INJECT, INJECT] and writer.sent == [LIST_LEAN, LEARN, LIST_LEAN, LIST_LEAN]
    for _ in range(3):  # a prompt's pinned list: nothing re-parsed, nothing dropped
        await reader.call(LIST_LEAN)
    assert writes == ["edge", "edge"] and reader.sent == [INJECT, INJECT]
    assert reader._heating.done() and len(writer.sent) == 7


def test_a_broker_started_under_debug_logs_each_forwarded_calls_time(monkeypatch, tmp_path, caplog):
    import logging
    import subprocess

    from tmg.broker import launch
    from tmg.broker.calls import trace

    started: list[list[str]] = []
    monkeypatch.setattr(subprocess, "Popen", lambda argv, **_kw: started.append(argv))
    for debug in ("1", "0"):
        launch.launch_broker({"TMG_HOME": str(tmp_path / debug), "TMG_DEBUG": debug, "HOME": str(tmp_path)})
    assert "--debug" in started[0] and "--debug" not in started[1]
    with caplog.at_level(logging.DEBUG, logger="tmg.broker"):
        trace("plur", "list", LIST_LEAN, 10.0, 10.5)
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith("server plur: list plur_pin in ") and "waiting for the store's write lock" in line
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tmg.broker"):
        trace("plur", "read", INJECT, 10.0, 10.0)
    assert caplog.records == []


async def test_a_call_detached_at_a_session_end_runs_after_the_writes_queued_before_it():
    """The session end hands its unfinished writes to the broker, then detaches its sync: the sync
    must push them, so it waits for the store's write lock to come free of them (bounded)."""
    from tmg.broker.calls import after_writes

    reader, writer, _ = _pair()
    writer.gate = asyncio.Event()
    landing = asyncio.create_task(reader.call(LEARN))  # a handed-off write, held in PLUR
    await asyncio.sleep(0)
    synced: list[str] = []

    async def sync() -> None:
        await after_writes(reader.write_lock, 30)
        synced.append("sync")

    detached = asyncio.create_task(sync())
    await asyncio.sleep(0.05)
    assert synced == []  # the write still holds the store
    writer.gate.set()
    await asyncio.wait_for(asyncio.gather(landing, detached), 5)
    assert synced == ["sync"] and writer.sent == [LEARN]
    await asyncio.wait_for(after_writes(None, 30), 1)  # a store no write went to: at once


async def test_a_write_that_never_lands_holds_the_sync_back_only_as_long_as_its_bound():
    from tmg.broker.calls import after_writes

    lock = asyncio.Lock()
    await lock.acquire()  # a hung write
    await asyncio.wait_for(after_writes(lock, 0.05), 2)  # returns: the sync runs anyway
