"""The server pool's lifecycle and the cold path's wait, with connections the test controls."""

from __future__ import annotations

import asyncio
import json

from tests.support.waiting import finishes
from tmg.config.model import Config, McpServerConfig
from tmg.mcp.outcome import ToolSpec
from tmg.mcp.pool import PooledServer, ServerPool
from tmg.mcp.spec import ServerSpec
from tmg.mcp.start_times import StartTimes
from tmg.mcp.server_set import McpToolServers
from tmg.mcp.tool_server import (COLD_WAIT_FACTOR, COLD_WAIT_MARGIN_S, MAX_COLD_WAIT_S, READY_WAIT_S, Connection,
                                 McpToolServer)
from tmg.tools.mcp_tools import McpTools

SPEC = ServerSpec(name="s", command="srv", env={"TOKEN": "secret-value-123"})


class Gated(Connection):
    """A connection whose start finishes when the test says."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.closed = False

    @property
    def tools(self) -> dict[str, ToolSpec]:
        return {"t": ToolSpec("t", {}, "a tool")}

    async def start(self) -> None:
        await self.release.wait()

    async def close(self) -> None:
        self.closed = True


async def test_a_pooled_server_starts_once_and_a_bounded_wait_returns_while_it_is_starting() -> None:
    conns: list[Gated] = []

    def connect(_spec: ServerSpec, _t: float) -> Gated:
        conns.append(Gated())
        return conns[-1]

    server = PooledServer(SPEC, start_timeout=5, connect=connect, warn=lambda _m: None)
    server.start()
    server.start()
    assert await server.wait(0.01) is False and server.state == "starting"
    conns[0].release.set()
    assert await finishes(server.wait(60)) is True and server.start_seconds is not None
    assert len(conns) == 1
    await server.close()
    assert conns[0].closed and server.state == "closed"


async def test_the_pool_reuses_a_server_of_the_same_spec_until_it_is_closed() -> None:
    pool: ServerPool[PooledServer] = ServerPool()

    def make() -> PooledServer:
        return PooledServer(SPEC, start_timeout=5, connect=lambda _s, _t: Gated(), warn=lambda _m: None)

    first = pool.get(SPEC, make)
    assert pool.get(SPEC, make) is first
    await first.close()
    assert pool.get(SPEC, make) is not first
    await pool.aclose()


def test_start_times_are_remembered_per_server_without_its_command_or_env(tmp_path) -> None:
    times = StartTimes(tmp_path)
    assert times.expected(SPEC) is None
    for seconds in (0.4, 1.2, 0.3):
        times.record(SPEC, seconds)
    assert StartTimes(tmp_path).expected(SPEC) == 1.2  # the slowest remembered start
    other = ServerSpec(name="s", command="srv", env={"TOKEN": "another"})
    assert StartTimes(tmp_path).expected(other) is None
    text = (tmp_path / "mcp-start-times.json").read_text()
    assert "secret-value-123" not in text and "srv" not in text
    assert list(json.loads(text).values()) == [[0.4, 1.2, 0.3]]


def test_a_prompt_waits_for_a_server_as_its_remembered_starts_need_within_a_bound(tmp_path) -> None:
    times = StartTimes(tmp_path)
    server = McpToolServer(SPEC, 30.0, lambda _s, _t: Gated(), lambda _m: None, times=times)
    assert server.cold_wait() == MAX_COLD_WAIT_S  # never started here: the bound
    times.record(SPEC, 0.01)
    quick = server.cold_wait()
    assert READY_WAIT_S <= quick <= 0.01 * COLD_WAIT_FACTOR + COLD_WAIT_MARGIN_S  # a quick start: a short wait
    times.record(SPEC, 1.0)
    assert quick < server.cold_wait() < MAX_COLD_WAIT_S
    times.record(SPEC, 60.0)
    assert server.cold_wait() == MAX_COLD_WAIT_S
    short = McpToolServer(SPEC, 2.0, lambda _s, _t: Gated(), lambda _m: None, times=times)
    assert short.cold_wait() == 2.0  # and never past the server's own TIMEOUT


async def test_a_server_left_out_is_said_once_with_how_long_it_was_waited_for(tmp_path) -> None:
    warnings: list[str] = []
    gate = Gated()
    servers = McpToolServers(warn=warnings.append, connect=lambda _s, _t: gate)
    cfg = Config(mcp_servers={"s": McpServerConfig(name="s", command="srv", timeout=0.2)})
    session = servers.for_session(cfg, tmp_path)
    tools = McpTools(session, cfg)
    servers.start()
    await finishes(tools.settle())
    await finishes(tools.settle())  # the next turn: the bound counts from the start, said once
    assert len(warnings) == 1 and warnings[0].startswith("MCP server s is still starting after 0.")
    assert tools.schemas() == []
    gate.release.set()
    await finishes(session.servers[0].wait(60))
    assert [t["function"]["name"] for t in tools.schemas()] == ["mcp_s_t"]
    assert servers.status_lines() == ["s: ready, 1 tool · stdio · not warm"]
    assert StartTimes(tmp_path).expected(session.servers[0].spec) is not None  # its start is remembered
    await servers.aclose()


class Listing(Gated):
    """A Gated connection whose resources/list is slow the first `slow` times."""

    def __init__(self, slow: int = 0) -> None:
        super().__init__()
        self.slow = slow
        self.lists = 0

    async def list_resource_uris(self, timeout: float) -> list[str]:
        from tmg.mcp.errors import McpCallTimeout

        self.lists += 1
        if self.lists <= self.slow:
            raise McpCallTimeout("s: resources/list did not answer in time")
        return ["demo://a", "demo://b"]


async def test_a_tab_while_the_server_starts_waits_for_it_and_lists_its_resources() -> None:
    conn = Listing()
    server = McpToolServer(SPEC, 30.0, lambda _s, _t: conn, lambda _m: None)
    server.start()
    asked = asyncio.ensure_future(server.resource_uris(0.05))
    await asyncio.sleep(0.2)  # longer than the listing's own bound: the start is waited for
    conn.release.set()
    assert await finishes(asked) == ["demo://a", "demo://b"]
    await server.close()


async def test_a_resource_list_that_timed_out_is_asked_again_at_the_next_tab() -> None:
    conn = Listing(slow=1)
    server = McpToolServer(SPEC, 30.0, lambda _s, _t: conn, lambda _m: None)
    server.start()
    conn.release.set()
    assert await finishes(server.wait(5)) is True
    assert await server.resource_uris(0.05) == []  # slow, not "no resources"
    assert await server.resource_uris(0.05) == ["demo://a", "demo://b"]
    assert await server.resource_uris(0.05) == ["demo://a", "demo://b"] and conn.lists == 2  # then kept
    await server.close()
