"""PLUR's reads on the broker's read process, and their reinforcement replayed when the store is idle
(tmg/broker/reinforce.py). The read process itself runs the real PLUR: bench/memory_scale.py and
e2e/test_memory_broker_reader.py."""

from __future__ import annotations

import asyncio

from tmg.broker.child import Spec
from tmg.broker.reinforce import KEPT, SHIM, Reinforcement, reader_launch

ENTRY = "/opt/plur/node_modules/@plur-ai/mcp/dist/index.js"


def _spec(command: str = "/usr/bin/node", args: tuple[str, ...] = (ENTRY,), kind: str = "memory",
          env: dict[str, str] | None = None) -> Spec:
    return Spec(command=command, args=args, env=tuple(sorted((env or {"HOME": "/h"}).items())), cwd="/", kind=kind)


def test_only_plurs_own_entry_run_by_node_is_read_through_the_shim():
    launch = reader_launch(_spec())
    assert launch is not None and launch.args == (str(SHIM), ENTRY) and launch.command == "/usr/bin/node"
    assert SHIM.is_file()
    assert reader_launch(_spec(kind="tools")) is None  # a WARM tool server runs as it is
    assert reader_launch(_spec(command="/usr/bin/python3", args=("fakeplur",))) is None
    assert reader_launch(_spec(args=("/opt/other/server.js",))) is None
    assert reader_launch(_spec(env={"HOME": "/h", "TMG_PLUR_READER": "0"})) is None  # the user's off switch


def _inject(task: str) -> dict:
    return {"name": "plur_inject_hybrid", "arguments": {"task": task, "budget": 2000}}


async def test_reads_are_replayed_once_each_when_the_store_has_been_idle_not_before():
    landed: list[list[dict]] = []

    async def land(calls: list[dict]) -> None:
        landed.append(calls)

    reinforcement = Reinforcement(land, idle=0.2)
    assert reinforcement.note(_inject("first"))
    reinforcement.note({"name": "plur_admin", "arguments": {"action": "plur_recall", "args": {"query": "q"}}})
    # reinforces nothing: not kept (it goes to the writer: tmg/broker/calls.py)
    assert not reinforcement.note({"name": "plur_pin", "arguments": {"list": True}})
    reinforcement.note(_inject("first") | {"_meta": {"progressToken": 7}})  # the same read again: replayed once
    for _ in range(4):  # the store keeps being used: no replay meanwhile
        await asyncio.sleep(0.1)
        reinforcement.touch()
        assert landed == []
    for _ in range(100):
        if len(landed) == 2:
            break
        await asyncio.sleep(0.05)
    assert landed == [[{"name": "plur_admin", "arguments": {"action": "plur_recall", "args": {"query": "q"}}}],
                      [_inject("first")]]
    assert reinforcement.replayed == 2 and reinforcement.kept == 0


async def test_what_is_kept_for_the_replay_is_bounded_and_landed_at_exit():
    landed: list[dict] = []

    async def land(calls: list[dict]) -> None:
        landed.extend(calls)

    reinforcement = Reinforcement(land, idle=600)
    for n in range(KEPT + 10):
        reinforcement.note(_inject(f"task {n}"))
    assert reinforcement.kept == KEPT
    await reinforcement.aclose(5.0)  # the broker exits: no idle period to wait for
    assert [c["arguments"]["task"] for c in landed] == [f"task {n}" for n in range(10, KEPT + 10)]


async def test_a_replay_that_fails_costs_nothing_but_itself():
    async def land(calls: list[dict]) -> None:
        raise RuntimeError("the writer is gone")

    reinforcement = Reinforcement(land, idle=600)
    reinforcement.note(_inject("x"))
    await reinforcement.aclose(5.0)
    assert reinforcement.replayed == 0 and reinforcement.kept == 0


async def test_a_replay_stops_when_the_store_is_used_again_and_the_rest_waits_for_the_next_idle_period():
    landed: list[str] = []
    warmed: list[int] = []
    reinforcement: Reinforcement

    async def land(calls: list[dict]) -> None:
        landed.extend(c["arguments"]["task"] for c in calls)
        if len(landed) == 1:
            reinforcement.note(_inject("a prompt meanwhile"))  # a client reads while the first replays

    reinforcement = Reinforcement(land, lambda: warmed.append(len(landed)), idle=0.2)
    for task in ("one", "two", "three"):
        reinforcement.note(_inject(task))
    for _ in range(200):
        if len(landed) == 4:
            break
        await asyncio.sleep(0.02)
    # one replayed read, then nothing while in use; after the next idle period, the rest
    assert landed == ["one", "two", "three", "a prompt meanwhile"]
    assert warmed == [1, 4]  # the read process warmed once after each replay, not after each read


def test_the_pinned_list_goes_the_writers_way_directly_and_through_the_lean_gateway():
    # It spans the stores PLUR was told of (a team store), which the read cache cannot see change.
    from tmg.broker.child import Child

    child = Child(_spec(), None)
    assert not child.is_read_call({"name": "plur_pin", "arguments": {"list": True}})
    assert not child.is_read_call({"name": "plur_admin", "arguments": {"action": "plur_pin", "args": {"list": True}}})
    assert not child.is_read_call({"name": "plur_pin", "arguments": {"id": "ENG-1", "pinned": True}})
    assert child.is_read_call({"name": "plur_admin", "arguments": {"action": "plur_recall", "args": {"query": "x"}}})
