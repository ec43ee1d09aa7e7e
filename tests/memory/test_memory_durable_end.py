"""Nothing committed is lost (quality.md §2, memory.md §4 and §6): the session end survives a
cancellation or a signal mid-step (every later step runs, the batch stays on disk), the ring is
on disk before it is sent (write-ahead: its own file, from the turn it was learned in, or the
spool when that file is not whole), so a session killed before or during its end (SIGKILL, a
signal) has it landed by the next session, exactly once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.memory.test_memory_session_end import Conn, answered, batches, end_for, open_memory
from tmg.memory.pending import orphans, pending_dir
from tmg.memory.session_end import MemoryEnd
from tmg.memory.spool import BatchSpool, spool_dir
from tmg.session.ending import SessionEnd


class HeldBatch(Conn):
    """`plur_learn_batch` hangs until `release` is set (a slow or stuck server mid-flush)."""

    def __init__(self, log: list[str], **kw: Any) -> None:
        super().__init__(log, **kw)
        self.release = asyncio.Event()
        self.entered = asyncio.Event()

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0):
        action = arguments.get("action") if name == "plur_admin" else name
        if action == "plur_learn_batch" and not self.release.is_set():
            self.entered.set()
            await self.release.wait()
        return await super().call_tool(name, arguments, timeout)


def ring_files(tmp_path) -> list:
    root = pending_dir(spool_dir(tmp_path / "home"))
    return sorted(root.glob("*.jsonl")) if root.is_dir() else []


def on_disk(tmp_path) -> list[str]:
    """The statements in ring files (as a later session would read them after this one is gone)."""
    import json

    return [json.loads(line)["statement"] for path in ring_files(tmp_path)
            for line in path.read_text().splitlines() if line.strip()]


def spooled(tmp_path) -> list[str]:
    return [i["statement"] for e in BatchSpool(spool_dir(tmp_path / "home")).pending() for i in e.engrams]


# -- the end itself ---------------------------------------------------------------------------

async def test_a_cancelled_end_finishes_every_step_then_passes_the_cancellation_on() -> None:
    log: list[str] = []
    gate = asyncio.Event()
    end = SessionEnd(report=lambda m: log.append(f"report: {m}"))

    async def slow() -> None:
        log.append("slow started")
        await gate.wait()
        log.append("slow finished")

    end.add("slow step", slow)
    end.add("close the transcript", lambda: log.append("transcript closed"))
    end.add("release the lock", lambda: log.append("lock released"))
    task = asyncio.ensure_future(end.run())
    while "slow started" not in log:
        await asyncio.sleep(0)
    task.cancel()
    for _ in range(5):
        await asyncio.sleep(0)
    assert not task.done() and "transcript closed" not in log  # still waiting on its step, not abandoned
    gate.set()
    with pytest.raises(asyncio.CancelledError):  # passed on once the end was over
        await task
    assert log == ["slow started", "slow finished", "transcript closed", "lock released"]
    assert end.finished


async def test_a_step_hit_by_ctrl_c_is_reported_and_the_later_steps_still_run() -> None:
    log: list[str] = []
    end = SessionEnd(report=lambda m: log.append(f"report: {m}"))

    def interrupted() -> None:
        raise KeyboardInterrupt

    async def cancelled() -> None:
        raise asyncio.CancelledError

    end.add("a step hit by Ctrl-C", interrupted)
    end.add("a cancelled step", cancelled)
    end.add("close the transcript", lambda: log.append("transcript closed"))
    with pytest.raises(KeyboardInterrupt):  # held until the end was over, then passed on
        await end.run()
    assert log == ["report: while ending the session, a step hit by Ctrl-C failed: KeyboardInterrupt",
                   "report: while ending the session, a cancelled step was interrupted",
                   "transcript closed"]


# -- memory's end under a cancellation / a signal -----------------------------------------------

async def test_cancelling_and_hurrying_the_end_mid_flush_keeps_the_batch_on_disk_and_runs_the_later_steps(
        tmp_path) -> None:
    log: list[str] = []
    conn = HeldBatch(log)
    memory = await open_memory(tmp_path, conn)
    await memory.hook.after_turn(answered("s-1", "Keep this lesson."), None)
    end = SessionEnd(report=lambda m: log.append(f"step failed: {m}"))
    for name, step in memory.end_steps(lambda text: log.append(f"notice {text}")):
        end.add(name, step, hurriable=name in ("finish memory writes", "flush the memory batch"))
    end.add("close the transcript", lambda: log.append("transcript closed"))
    task = asyncio.ensure_future(end.run())
    await asyncio.wait_for(conn.entered.wait(), 10)
    assert on_disk(tmp_path) == ["Keep this lesson."]  # write-ahead: on disk before it is sent
    task.cancel()  # Ctrl-C / SIGTERM reaching the task that runs the end...
    end.hurry()  # ...and the signal handler, which only hurries it
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), 10)
    assert log[-2:] == ["close", "transcript closed"]  # the later steps all ran
    assert "step failed: while ending the session, flush the memory batch was cut short" in log
    assert on_disk(tmp_path) == ["Keep this lesson."]
    crash(memory)  # the process exits after its end

    # the next session lands it, once, and clears the disk
    conn2 = Conn([], profile="full")
    second = await open_memory(tmp_path, conn2, sid="s-2")
    await second.end.flush()
    assert batches(conn2) == [["Keep this lesson."]] and spooled(tmp_path) == [] and ring_files(tmp_path) == []


async def test_the_batch_is_on_disk_while_it_is_sent_and_leaves_the_disk_once_it_lands(tmp_path) -> None:
    log: list[str] = []
    conn = HeldBatch(log)
    memory = await open_memory(tmp_path, conn)
    await memory.hook.after_turn(answered("s-1", "A lesson."), None)
    flush = asyncio.ensure_future(memory.end.flush())
    await asyncio.wait_for(conn.entered.wait(), 10)
    # its own file is the write-ahead record: not written a second time into the spool
    assert on_disk(tmp_path) == ["A lesson."] and spooled(tmp_path) == []
    conn.release.set()
    outcome = await asyncio.wait_for(flush, 10)
    assert outcome.sent == 1 and outcome.spooled == 0 and spooled(tmp_path) == [] and ring_files(tmp_path) == []


async def test_a_ring_whose_file_could_not_be_written_is_spooled_before_it_is_sent(tmp_path) -> None:
    log: list[str] = []
    conn = HeldBatch(log)
    memory = await open_memory(tmp_path, conn)
    pending = pending_dir(spool_dir(tmp_path / "home"))
    pending.parent.mkdir(parents=True, exist_ok=True)
    pending.write_text("not a folder")  # the ring's file cannot be written: it lives in memory only
    await memory.hook.after_turn(answered("s-1", "A lesson."), None)
    assert not memory.hook.batch_is_durable("s-1")
    flush = asyncio.ensure_future(memory.end.flush())
    await asyncio.wait_for(conn.entered.wait(), 10)
    assert spooled(tmp_path) == ["A lesson."]
    conn.release.set()
    outcome = await asyncio.wait_for(flush, 10)
    assert outcome.sent == 1 and spooled(tmp_path) == []


# -- the ring on disk (SIGKILL) -----------------------------------------------------------------

def crash(memory) -> None:
    """What the kernel does for a killed process: its files close (and their locks go), nothing else."""
    for ring in [*memory.hook._pending.values(), *memory.hook._kept]:
        ring._close()


async def test_a_ring_left_by_a_killed_session_is_landed_by_the_next_flush_exactly_once(tmp_path) -> None:
    first = await open_memory(tmp_path, Conn([]), sid="s-1", scope="project:x")
    await first.hook.after_turn(answered("s-1", "First lesson."), None)
    await first.hook.after_turn(answered("s-1", "Second lesson.", 2), None)
    (ring_file,) = ring_files(tmp_path)
    # while its session is alive, its ring is not anyone else's to send
    assert orphans(ring_file.parent, 20) == []
    crash(first)  # SIGKILL between the append and the flush

    conn = Conn([], profile="full")
    second = await open_memory(tmp_path, conn, sid="s-2")
    outcome = await second.end.flush()
    assert batches(conn) == [["First lesson.", "Second lesson."]]
    assert conn.calls[0][1]["engrams"][0] == {"statement": "First lesson.", "scope": "project:x",
                                              "tags": ["session:s-1", "mode:chat", "origin:answer"],
                                              "source": "tmg: a model's answer (may be wrong)"}
    assert outcome.replayed == 1 and ring_files(tmp_path) == [] and spooled(tmp_path) == []

    conn3 = Conn([], profile="full")
    third = await open_memory(tmp_path, conn3, sid="s-3")
    await third.end.flush()
    assert batches(conn3) == []  # exactly once


async def test_the_ring_on_disk_keeps_the_ring_bound(tmp_path) -> None:
    first = await open_memory(tmp_path, Conn([]), sid="s-1")
    for n in range(55):  # past the compaction point twice
        await first.hook.after_turn(answered("s-1", f"Lesson {n}.", n + 1), None)
    assert len(ring_files(tmp_path)) == 1
    crash(first)
    conn = Conn([], profile="full")
    second = await open_memory(tmp_path, conn, sid="s-2")
    await second.end.flush()
    assert batches(conn) == [[f"Lesson {n}." for n in range(35, 55)]]


async def test_a_clean_end_leaves_no_ring_file(tmp_path) -> None:
    log: list[str] = []
    memory = await open_memory(tmp_path, Conn(log))
    await memory.hook.after_turn(answered("s-1", "Lesson."), None)
    assert len(ring_files(tmp_path)) == 1
    await end_for(memory, log).run()
    assert ring_files(tmp_path) == [] and spooled(tmp_path) == []


async def test_learning_off_at_the_end_drops_the_ring_file_too(tmp_path) -> None:
    from tests.memory.test_memory_session_end import SERVER
    from tmg.config.model import Config, MemoryConfig

    memory = await open_memory(tmp_path, Conn([]))
    await memory.hook.after_turn(answered("s-1", "something"), None)
    memory._config.config = Config(mcp_servers={"plur": SERVER}, memory=MemoryConfig(enabled=True, learn="off"))
    await memory.end.flush()
    assert ring_files(tmp_path) == [] and spooled(tmp_path) == []


# -- the drain and the wait ---------------------------------------------------------------------

async def test_writes_cut_off_by_the_drain_count_as_failures_in_the_notice(tmp_path) -> None:
    log: list[str] = []
    conn = Conn(log)
    conn.fake.config = type(conn.fake.config)(profile="lean", delays={"plur_capture": 30})
    memory = await open_memory(tmp_path, conn, learn="capture")
    memory.end._drain_wait = 0.05
    await memory.hook.after_turn(answered("s-1", "x"), None)
    notices: list[str] = []
    await memory.end.drain()
    assert memory.end.notify(notices.append) == "memory write failures: 1; plur_capture failing — learning is disabled"


class _Clients:
    """A ClientSource that never has a server; records how long it was asked to wait."""

    starting = True

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def client(self, wait: float):
        self.waits.append(wait)
        return None


async def test_nothing_to_send_means_no_wait_for_a_server(tmp_path) -> None:
    from tests.memory.test_memory_session_end import Live
    from tmg.memory.health import WriteReport
    from tmg.memory.learning import LearningHook

    clients = _Clients()
    hook = LearningHook(clients, Live())
    end = MemoryEnd(session_id="s-1", config=Live(), clients=clients, hook=hook,
                    spool=BatchSpool(spool_dir(tmp_path / "home")), report=WriteReport())
    await end.flush()
    assert clients.waits == []
    hook._append("s-1", "something", [], "")
    outcome = await end.flush()
    assert clients.waits == [end._client_wait] and outcome.spooled == 1


async def test_a_spool_that_cannot_be_written_leaves_the_batch_in_the_rings_file(tmp_path) -> None:
    first = await open_memory(tmp_path, Conn([], down=True), sid="s-1")
    await first.hook.after_turn(answered("s-1", "Survive a full disk."), None)

    def full_disk(_items):
        raise OSError("No space left on device")

    first.spool.put = full_disk
    outcome = await first.end.flush()
    assert outcome.lost == 0 and outcome.spooled == 1 and len(ring_files(tmp_path)) == 1
    crash(first)
    conn = Conn([], profile="full")
    second = await open_memory(tmp_path, conn, sid="s-2")
    await second.end.flush()
    assert batches(conn) == [["Survive a full disk."]] and ring_files(tmp_path) == []
