"""McpConnection: a server hung in its start is cancelled at once on close, child and all.

The close bounds are set to an hour here: a close that waited on a hung start (instead of
cancelling it) trips the hang guard, while one that cancels it finishes at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.plur_server import process_gone
from tests.support.waiting import eventually, finishes
from tmg.mcp import McpStartError, ServerSpec, child_environment
from tmg.mcp import connection as connection_module
from tmg.mcp.connection import McpConnection
from tmg.mcp import pool as pool_module
from tmg.memory.runtime import MemoryRuntime


@pytest.fixture(autouse=True)
def patient_bounds(monkeypatch) -> None:
    monkeypatch.setattr(connection_module, "_CLOSE_WAIT_S", 3600.0)
    monkeypatch.setattr(pool_module, "START_CANCEL_WAIT_S", 3600.0)


def hung_server(tmp_path: Path) -> tuple[ServerSpec, Path]:
    """A server that never answers initialize (nor exits on stdin EOF); its pid lands in a file."""
    pidfile = tmp_path / "pid"
    spec = ServerSpec("hung", command="sh", args=("-c", f'echo $$ > "{pidfile}"; exec sleep 3600'),
                      env=child_environment({}), cwd=str(tmp_path))
    return spec, pidfile


async def spawned(pidfile: Path) -> int:
    async def poll() -> None:
        while not pidfile.exists() or not pidfile.read_text().strip():
            await asyncio.sleep(0.01)

    await finishes(poll())
    return int(pidfile.read_text())


async def test_close_during_a_hung_start_cancels_it_and_kills_the_child(tmp_path: Path) -> None:
    spec, pidfile = hung_server(tmp_path)
    conn = McpConnection(spec, start_timeout=3600)
    start = asyncio.create_task(conn.start())
    pid = await spawned(pidfile)
    await finishes(conn.close())
    assert conn._owner is not None and conn._owner.cancelled()
    assert eventually(lambda: process_gone(pid))
    with pytest.raises(McpStartError):
        await finishes(start)
    assert not conn.is_open


async def test_a_cancelled_start_kills_the_child_at_once(tmp_path: Path) -> None:
    spec, pidfile = hung_server(tmp_path)
    conn = McpConnection(spec, start_timeout=3600)
    start = asyncio.create_task(conn.start())
    pid = await spawned(pidfile)
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await finishes(start)
    assert conn._owner is not None and conn._owner.cancelled()
    assert eventually(lambda: process_gone(pid))
    await finishes(conn.close())  # nothing left to close: still quick and quiet


async def test_the_memory_runtime_closes_a_server_hung_in_its_start_at_once(tmp_path: Path) -> None:
    spec, pidfile = hung_server(tmp_path)
    warnings: list[str] = []
    runtime = MemoryRuntime(spec, start_timeout=3600, warn=warnings.append)
    runtime.start()
    assert await finishes(runtime.client(wait=0.05)) is None  # a prompt went on without it
    pid = await spawned(pidfile)
    await finishes(runtime.close())
    assert eventually(lambda: process_gone(pid))
    assert runtime.state == "closed" and warnings == []
