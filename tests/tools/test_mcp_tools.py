"""MCP server tools in the registry: naming, isError, transport failures, withdrawal, consent."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tmg.config.model import Config, McpServerConfig, MemoryConfig
from tmg.mcp.errors import McpCallError, McpCallFailed, McpStartError
from tmg.mcp.outcome import ToolOutcome, ToolSpec
from tmg.mcp.spec import ServerSpec
from tmg.mcp.server_set import McpToolServers
from tmg.mcp.tool_server import Connection
from tmg.tools.mcp_tools import MAX_NAME_CHARS, McpTools, public_name
from tmg.tools.registry import Tool, ToolRegistry, ToolResult
from tests.support.gates import ALLOW

ECHO_SERVER = Path(__file__).resolve().parents[1] / "support" / "echo_mcp_server.py"
ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


class FakeConnection(Connection):
    """A connection whose tools and answers the test chooses."""

    def __init__(self, spec: ServerSpec, tools: dict[str, ToolSpec], *, start_error: Exception | None = None,
                 answers: dict[str, Any] | None = None) -> None:
        self.spec = spec
        self._tools = tools
        self._start_error = start_error
        self.answers = answers or {}
        self.calls: list[tuple[str, dict[str, Any], float]] = []
        self.closed = False

    @property
    def tools(self) -> dict[str, ToolSpec]:
        return dict(self._tools)

    async def start(self) -> None:
        if self._start_error is not None:
            raise self._start_error

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0, **_options: Any) -> ToolOutcome:
        self.calls.append((name, arguments, timeout))
        answer = self.answers.get(name, ToolOutcome.from_text(json.dumps(arguments), is_error=False))
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def close(self) -> None:
        self.closed = True


def config(*entries: McpServerConfig, memory: MemoryConfig | None = None) -> Config:
    return Config(mcp_servers={e.name: e for e in entries}, memory=memory or MemoryConfig())


def echo_tools() -> dict[str, ToolSpec]:
    return {"echo": ToolSpec("echo", ECHO_SCHEMA, "Answer the text back.")}


class Harness:
    def __init__(self, **per_server: dict[str, Any]) -> None:
        self.per_server = per_server
        self.conns: dict[str, FakeConnection] = {}
        self.warnings: list[str] = []

    def connect(self, spec: ServerSpec, start_timeout: float) -> FakeConnection:
        kwargs = dict(self.per_server.get(spec.name, {}))
        tools = kwargs.pop("tools", echo_tools())
        conn = self.conns[spec.name] = FakeConnection(spec, tools, **kwargs)
        return conn

    async def registry(self, cfg: Config) -> tuple[ToolRegistry, McpToolServers]:
        servers = McpToolServers(warn=self.warnings.append, connect=self.connect)
        source = McpTools(servers.for_session(cfg, ready_wait=5.0), cfg)
        servers.start()
        registry = ToolRegistry(sources=[source], gate=ALLOW)
        await registry.settle()
        return registry, servers


def names(registry: ToolRegistry) -> list[str]:
    return [s["function"]["name"] for s in registry.schemas()]


def test_public_names_are_sanitised_capped_and_unique():
    assert public_name("echo", "echo") == "mcp_echo_echo"
    assert public_name("my.server", "do thing/now") == "mcp_my_server_do_thing_now"
    long = public_name("s", "x" * 100)
    assert len(long) == MAX_NAME_CHARS and long.startswith("mcp_s_x")
    taken = {long}
    second = public_name("s", "x" * 100, taken)
    assert second != long and len(second) <= MAX_NAME_CHARS and second.endswith("_2")
    assert public_name("a", "b-c_D9") == "mcp_a_b-c_D9"


async def test_ready_tools_are_offered_with_schema_and_description_and_map_back_to_the_real_name():
    h = Harness(**{"my.srv": {"tools": {"do it": ToolSpec("do it", ECHO_SCHEMA, "Does it.")}}})
    registry, servers = await h.registry(config(McpServerConfig(name="my.srv", command="x")))
    (schema,) = registry.schemas()
    assert schema["function"] == {"name": "mcp_my_srv_do_it", "description": "Does it.", "parameters": ECHO_SCHEMA}
    result = await registry.call("mcp_my_srv_do_it", '{"text": "hi"}', timeout=7)
    assert result == ToolResult('{"text": "hi"}')
    assert h.conns["my.srv"].calls == [("do it", {"text": "hi"}, 7)]  # the turn's TOOL_TIMEOUT
    await servers.aclose()
    assert h.conns["my.srv"].closed


async def test_builtin_tools_stay_beside_the_servers_tools():
    class Builtin(Tool):
        name, description, parameters = "read_file", "reads", {"type": "object"}

        async def run(self, arguments: dict[str, Any]) -> ToolResult:
            return ToolResult("built-in")

    h = Harness()
    servers = McpToolServers(connect=h.connect)
    cfg = config(McpServerConfig(name="echo", command="x"))
    source = McpTools(servers.for_session(cfg, ready_wait=5.0), cfg)
    servers.start()
    registry = ToolRegistry([Builtin()], sources=[source], gate=ALLOW)
    await registry.settle()
    assert names(registry) == ["read_file", "mcp_echo_echo"]
    assert (await registry.call("read_file", "{}", 5)).content == "built-in"
    await servers.aclose()


async def test_an_is_error_result_goes_back_as_an_error_and_keeps_the_server():
    h = Harness(echo={"answers": {"echo": ToolOutcome.from_text("no such file", is_error=True)}})
    registry, servers = await h.registry(config(McpServerConfig(name="echo", command="x")))
    result = await registry.call("mcp_echo_echo", '{"text": "hi"}', 5)
    assert result.is_error and "no such file" in result.content
    assert names(registry) == ["mcp_echo_echo"] and h.warnings == []
    await servers.aclose()


async def test_a_transport_failure_is_an_error_naming_the_server_one_warning_and_the_tools_withdrawn():
    h = Harness(echo={"answers": {"echo": McpCallError("echo.echo: connection closed")}},
                other={"tools": {"ping": ToolSpec("ping", {"type": "object"}, "")}})
    cfg = config(McpServerConfig(name="echo", command="x"), McpServerConfig(name="other", command="y"))
    registry, servers = await h.registry(cfg)
    result = await registry.call("mcp_echo_echo", '{"text": "hi"}', 5)
    assert result.is_error and "MCP server echo" in result.content and "connection closed" in result.content
    assert len(h.warnings) == 1 and "MCP server echo" in h.warnings[0] and "withdrawn" in h.warnings[0]
    assert names(registry) == ["mcp_other_ping"]  # the other server's tools stay
    again = await registry.call("mcp_echo_echo", '{"text": "hi"}', 5)
    assert again.is_error and len(h.warnings) == 1  # warned once
    await servers.aclose()


async def test_a_server_that_does_not_start_costs_one_warning_and_the_others_go_on():
    h = Harness(broken={"start_error": McpStartError("broken: FileNotFoundError: nope")})
    cfg = config(McpServerConfig(name="broken", command="nope"), McpServerConfig(name="echo", command="x"))
    registry, servers = await h.registry(cfg)
    assert names(registry) == ["mcp_echo_echo"]
    assert len(h.warnings) == 1 and "MCP server broken did not start" in h.warnings[0]
    await servers.aclose()


async def test_consent_servers_are_offered_with_every_call_marked_and_the_memory_server_is_left_to_memory():
    h = Harness()
    cfg = config(McpServerConfig(name="shell", command="x", requires_consent=True),
                 McpServerConfig(name="plur", command="x"), McpServerConfig(name="echo", command="x"),
                 memory=MemoryConfig(enabled=True, server="plur"))
    registry, servers = await h.registry(cfg)
    assert sorted(names(registry)) == ["mcp_echo_echo", "mcp_shell_echo"]
    assert set(h.conns) == {"echo", "shell"}  # the memory server is not started for tools
    assert h.warnings == []
    source = registry._sources[0]
    assert source.action("mcp_shell_echo", {"text": "x"}).requires_consent
    assert not source.action("mcp_echo_echo", {"text": "x"}).requires_consent
    await servers.aclose()


async def test_the_memory_servers_tools_are_offered_when_memory_is_off():
    h = Harness()
    cfg = config(McpServerConfig(name="plur", command="x"), memory=MemoryConfig(enabled=False, server="plur"))
    registry, servers = await h.registry(cfg)
    assert names(registry) == ["mcp_plur_echo"]
    await servers.aclose()


async def test_a_slow_server_does_not_hold_the_turn_and_joins_later():
    gate = asyncio.Event()

    class Slow(FakeConnection):
        async def start(self) -> None:
            await gate.wait()

    servers = McpToolServers(connect=lambda spec, _t: Slow(spec, echo_tools()))
    cfg = config(McpServerConfig(name="echo", command="x"))
    session = servers.for_session(cfg, ready_wait=0.0)
    source = McpTools(session, cfg)
    servers.start()
    registry = ToolRegistry(sources=[source], gate=ALLOW)
    await registry.settle()  # a zero bound: returns at once
    assert names(registry) == []
    gate.set()
    (server,) = session.servers
    await server.wait(30)  # the start finishes by itself; no turn was held for it
    assert names(registry) == ["mcp_echo_echo"]
    await servers.aclose()


async def test_the_process_shares_one_server_across_sessions():
    h = Harness()
    servers = McpToolServers(connect=h.connect)
    cfg = config(McpServerConfig(name="echo", command="x"))
    first = servers.for_session(cfg)
    second = servers.for_session(cfg)
    servers.start()
    await first.settle()
    assert first.servers == second.servers and len(h.conns) == 1
    await servers.aclose()


@pytest.fixture
def echo_entry() -> McpServerConfig:
    return McpServerConfig(name="echo", command=sys.executable, args=(str(ECHO_SERVER),), timeout=30)


@pytest.fixture
async def echo_registry(echo_entry):
    """A registry over the real echo server, started and settled, and the warnings it gave."""
    warnings: list[str] = []
    servers = McpToolServers(warn=warnings.append)
    source = McpTools(servers.for_session(config(echo_entry), ready_wait=30), config(echo_entry))
    servers.start()
    registry = ToolRegistry(sources=[source], gate=ALLOW)
    try:
        await registry.settle()
        yield registry, warnings
    finally:
        await servers.aclose()


async def test_a_real_server_echoes_fails_and_crashes_without_taking_the_registry_down(echo_registry):
    registry, warnings = echo_registry
    schemas = {s["function"]["name"]: s["function"] for s in registry.schemas()}
    assert {"mcp_echo_echo", "mcp_echo_fail", "mcp_echo_crash", "mcp_echo_nap", "mcp_echo_scribble"} <= set(schemas)
    assert schemas["mcp_echo_echo"]["parameters"]["properties"]["text"]["type"] == "string"
    assert await registry.call("mcp_echo_echo", '{"text": "hi"}', 10) == ToolResult("hi")
    failed = await registry.call("mcp_echo_fail", "{}", 10)
    assert failed.is_error and "always fails" in failed.content and warnings == []
    crashed = await registry.call("mcp_echo_crash", "{}", 10)
    assert crashed.is_error and "MCP server echo" in crashed.content
    assert len(warnings) == 1 and "withdrawn" in warnings[0]
    assert registry.schemas() == []


async def test_a_call_past_its_timeout_is_an_error_but_the_server_stays(echo_registry):
    registry, warnings = echo_registry
    result = await registry.call("mcp_echo_nap", '{"seconds": 30}', 0.2)
    assert result.is_error and "did not answer within 0.2 s" in result.content
    assert warnings == [] and "mcp_echo_echo" in [s["function"]["name"] for s in registry.schemas()]
    again = await registry.call("mcp_echo_echo", '{"text": "still here"}', 10)
    assert not again.is_error and "still here" in again.content


async def test_the_shipped_memory_server_tmg_adds_itself_is_not_a_tool_server():
    h = Harness()
    cfg = Config(mcp_servers={"plur": McpServerConfig(name="plur", command="node"),
                              "echo": McpServerConfig(name="echo", command="x")},
                 memory=MemoryConfig(enabled=False),
                 origins={"MCP_SERVERS.plur.COMMAND": "default", "MCP_SERVERS.echo.COMMAND": "file"})
    registry, servers = await h.registry(cfg)
    assert names(registry) == ["mcp_echo_echo"] and set(h.conns) == {"echo"}
    await servers.aclose()


async def test_an_oversized_result_is_truncated_with_a_note_to_the_model():
    from tmg.tools.registry import MAX_RESULT_CHARS

    h = Harness(echo={"answers": {"echo": ToolOutcome.from_text("x" * (MAX_RESULT_CHARS + 500), is_error=False)}})
    registry, servers = await h.registry(config(McpServerConfig(name="echo", command="x")))
    result = await registry.call("mcp_echo_echo", '{"text": "hi"}', 5)
    assert result.content.startswith("x" * MAX_RESULT_CHARS)
    assert result.content.endswith("[truncated: 500 more characters not shown]")
    await servers.aclose()


async def test_a_json_rpc_error_answer_is_an_error_result_and_keeps_the_server():
    refused = McpCallFailed("echo.echo: MCPError: bad", reason="bad argument (JSON-RPC error -32602)")
    h = Harness(echo={"answers": {"echo": refused}})
    registry, servers = await h.registry(config(McpServerConfig(name="echo", command="x")))
    result = await registry.call("mcp_echo_echo", '{"text": "hi"}', 5)
    assert result == ToolResult("error: echo answered with an error: bad argument (JSON-RPC error -32602)", True)
    assert names(registry) == ["mcp_echo_echo"] and h.warnings == []
    await servers.aclose()


async def test_an_output_schema_mismatch_is_said_once_per_tool_and_the_text_is_used():
    off = ToolOutcome.from_text("sunny", is_error=False, mismatch="'warm' is not of type 'number'")
    h = Harness(echo={"answers": {"echo": off}})
    registry, servers = await h.registry(config(McpServerConfig(name="echo", command="x")))
    for _ in range(3):
        assert await registry.call("mcp_echo_echo", '{"text": "hi"}', 5) == ToolResult("sunny")
    assert h.warnings == ["MCP server echo: echo returned structured content that does not match its declared "
                          "outputSchema ('warm' is not of type 'number'); its text is used"]
    await servers.aclose()


async def test_a_tool_list_change_is_listed_again_at_the_next_settle_only():
    h = Harness()
    registry, servers = await h.registry(config(McpServerConfig(name="echo", command="x")))
    conn = h.conns["echo"]
    listed: list[int] = []

    async def refresh_tools() -> None:
        listed.append(1)
        conn.tools_changed = False
        conn._tools = {**conn._tools, "more": ToolSpec("more", {}, "More.")}

    conn.refresh_tools = refresh_tools  # type: ignore[attr-defined]
    conn.tools_changed = True  # type: ignore[attr-defined]  # notifications/tools/list_changed arrived
    assert names(registry) == ["mcp_echo_echo"]  # not in the middle of a turn
    await registry.settle()  # the next phase boundary
    assert names(registry) == ["mcp_echo_echo", "mcp_echo_more"] and listed == [1]
    await registry.settle()
    assert listed == [1]
    await servers.aclose()
