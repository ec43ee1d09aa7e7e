"""MemoryRuntime: background start, a bounded wait for readiness, one warning on failure, quick close."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.support.doubles import FakePlurCaller
from tests.support.plur_server import fakeplur_spec, lingering, process_gone
from tests.support.waiting import eventually, finishes
from tmg.config.model import Config, McpServerConfig, MemoryConfig
from tmg.context.pipeline import TurnContext
from tmg.mcp import McpStartError, ServerSpec
from tmg.mcp import pool as pool_module
from tmg.memory.health import WriteReport
from tmg.memory.injector import START_MARKER, MemoryInjector
from tmg.memory.runtime import MemoryRuntime, memory_server_spec

SPEC = ServerSpec(name="plur", command="unused")


class InProcess(FakePlurCaller):
    """fakeplur in-process with a start the test controls: it finishes once `release` is set (at
    once unless `gated`), then succeeds or fails. `start_cancelled` records a start cut short."""

    def __init__(self, profile: str = "lean", gated: bool = False, fail: bool = False,
                 tools: set[str] | None = None):
        super().__init__(profile)
        self.fail, self._listed = fail, tools
        self.release = asyncio.Event()
        if not gated:
            self.release.set()
        self.entered = asyncio.Event()
        self.start_cancelled = False
        self.closed = False

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(self._listed) if self._listed is not None else super().tool_names

    async def start(self) -> None:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.start_cancelled = True
            raise
        if self.fail:
            raise McpStartError("plur: FileNotFoundError: no such command")

    async def close(self) -> None:
        self.closed = True


def runtime_with(conn: Any, **kw: Any) -> tuple[MemoryRuntime, list[str]]:
    warnings: list[str] = []
    return MemoryRuntime(SPEC, warn=warnings.append, connect=lambda _spec, _t: conn, **kw), warnings


async def test_a_real_fakeplur_process_starts_in_the_background_and_answers(tmp_path) -> None:
    report, pidfile = WriteReport(), tmp_path / "pid"
    spec = lingering(fakeplur_spec(tmp_path, "lean", seed=["Never deploy on Fridays"]), pidfile)
    runtime = MemoryRuntime(spec, on_result=report.record)
    runtime.start()
    assert runtime.state == "starting"
    client = await runtime.client(wait=30)
    assert client is not None and runtime.state == "ready" and "plur_admin" in runtime.describe()
    result = await client.inject("can we deploy on Fridays", 2000)
    assert result.ok and len(result.value.injected_ids) == 1
    assert report.injection.attempts == 1
    pid = int(pidfile.read_text())
    assert not process_gone(pid)
    # The server does not exit on stdin EOF: close stops it rather than waiting for it.
    await finishes(runtime.close())
    assert eventually(lambda: process_gone(pid))
    assert await runtime.client(wait=1) is None


async def test_a_command_that_does_not_start_warns_once_and_memory_is_off(tmp_path) -> None:
    warnings: list[str] = []
    spec = ServerSpec(name="plur", command=str(tmp_path / "no-such-plur"))
    runtime = MemoryRuntime(spec, warn=warnings.append, start_timeout=5)
    runtime.start()
    assert await runtime.client(wait=10) is None
    assert runtime.state == "failed" and len(warnings) == 1
    assert "memory server 'plur' did not start" in warnings[0] and "memory is off for this session" in warnings[0]
    assert await runtime.client(wait=10) is None and len(warnings) == 1
    await runtime.close()


async def test_a_server_without_the_memory_tools_is_refused() -> None:
    conn = InProcess(tools={"some_other_tool"})
    runtime, warnings = runtime_with(conn)
    runtime.start()
    assert await runtime.client(wait=1) is None
    assert runtime.state == "failed" and "is it PLUR?" in warnings[0] and conn.closed


async def test_a_prompt_does_not_wait_long_for_a_slow_start() -> None:
    conn = InProcess(gated=True)
    runtime, _ = runtime_with(conn)
    runtime.start()
    # The start is held until released: a short wait gives up on it.
    assert await finishes(runtime.client(wait=0.05)) is None
    assert runtime.state == "starting" and not conn.start_cancelled  # given up on, not cut short
    conn.release.set()
    assert await runtime.client(wait=20) is not None  # a write may wait for the whole start


async def test_the_injector_skips_a_turn_while_the_server_starts_then_injects() -> None:
    conn = InProcess("full", gated=True)
    await conn.call_tool("plur_learn", {"statement": "Never deploy on Fridays"})
    runtime, _ = runtime_with(conn)
    runtime.start()
    injector = MemoryInjector(runtime, ready_wait=0.05)
    config = Config(memory=MemoryConfig(enabled=True))
    first = TurnContext([{"role": "user", "content": "deploy on Fridays?"}], config, 1, 1)
    await injector.apply(first)
    assert first.messages[0]["role"] == "user" and injector.stats.not_ready == 1
    conn.release.set()
    assert await runtime.client(wait=20) is not None
    second = TurnContext([{"role": "user", "content": "deploy on Fridays?"}], config, 1, 2)
    await injector.apply(second)
    (block,) = second.riders
    assert START_MARKER in block and "Never deploy on Fridays" in block


async def test_close_during_the_start_is_quick_and_quiet(monkeypatch) -> None:
    # However long close would let a cancelled start wind down, it cancels the start instead of
    # waiting for it: the start below is never released.
    monkeypatch.setattr(pool_module, "START_CANCEL_WAIT_S", 3600.0)
    conn = InProcess(gated=True)
    runtime, warnings = runtime_with(conn)
    runtime.start()
    waiter = asyncio.create_task(runtime.client(wait=3600))
    await finishes(conn.entered.wait())  # the start is under way, held
    await finishes(runtime.close())
    assert conn.start_cancelled and conn.closed and runtime.state == "closed"
    assert await finishes(waiter) is None and warnings == []


async def test_no_spec_means_off_without_a_warning() -> None:
    warnings: list[str] = []
    runtime = MemoryRuntime(None, warn=warnings.append)
    runtime.start()
    assert await runtime.client(wait=1) is None and runtime.state == "off" and warnings == []
    await runtime.close()


def test_the_spec_comes_from_memory_server_with_a_minimal_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    server = McpServerConfig(name="plur", command="node", args=("plur.js",), env={"PLUR_TOOL_PROFILE": "full"},
                             dir="/tmp")
    config = Config(mcp_servers={"plur": server}, memory=MemoryConfig(enabled=True, server="plur"))
    spec = memory_server_spec(config)
    assert spec is not None and spec.command == "node" and spec.args == ("plur.js",) and spec.cwd == "/tmp"
    assert spec.env["PLUR_TOOL_PROFILE"] == "full" and "OPENAI_API_KEY" not in spec.env
    off = Config(mcp_servers={"plur": server}, memory=MemoryConfig(enabled=False))
    missing = Config(memory=MemoryConfig(enabled=True, server="plur"))
    assert memory_server_spec(off) is None and memory_server_spec(missing) is None


async def test_sessions_of_one_process_share_one_server_and_keep_their_own_write_reports() -> None:
    from tmg.memory.runtime import MemoryServers

    started: list[InProcess] = []

    def connect(_spec: ServerSpec, _timeout: float) -> InProcess:
        started.append(InProcess("full"))
        return started[-1]

    servers = MemoryServers(connect=connect)
    server = McpServerConfig(name="plur", command="node", args=("plur.js",))
    config = Config(mcp_servers={"plur": server}, memory=MemoryConfig(enabled=True))
    first, second = servers.runtime_for(config), servers.runtime_for(config)
    assert first is second
    first.start()
    second.start()  # idempotent: a second session does not start another server
    reports = WriteReport(), WriteReport()
    clients = [first.for_session(r.record) for r in reports]
    a, b = [await c.client(wait=5) for c in clients]
    assert a is not None and b is not None and len(started) == 1
    await a.capture("one", "default", "s-1")
    await b.capture("two", "default", "s-2")
    await b.capture("three", "default", "s-2")
    assert [r.writes["plur_capture"].attempts for r in reports] == [1, 2]
    off = servers.runtime_for(Config(mcp_servers={"plur": server}, memory=MemoryConfig(enabled=False)))
    assert off.spec is None and off is not first
    await servers.aclose()
    assert started[0].closed and await clients[0].client(wait=1) is None
