"""The broker's bounds, in process against a real MCP server (tests/support/echo_mcp_server.py):
a call carries its client's bound and fails at it, a cancelled call frees the store's write lock,
and a server that stopped answering is restarted."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tmg.broker.child import Child
from tmg.broker.client import BrokerConnection
from tmg.broker.daemon import Broker
from tmg.mcp.errors import McpCallTimeout
from tmg.mcp.spec import ServerSpec, child_environment

ECHO = Path(__file__).resolve().parents[1] / "support" / "echo_mcp_server.py"


def _spec(tmp_path: Path) -> ServerSpec:
    env = child_environment({"HOME": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)})
    return ServerSpec(name="echo", command=sys.executable, args=(str(ECHO),), env=env, cwd=str(tmp_path))


class _Running:
    """A broker serving in this event loop, and one client of it."""

    def __init__(self, tmp_path: Path) -> None:
        self.broker = Broker(tmp_path / "run", idle=600)
        self.spec = _spec(tmp_path)

    async def __aenter__(self) -> _Running:
        self.serving = asyncio.create_task(self.broker.serve())
        while not self.broker.socket.exists():
            await asyncio.sleep(0.01)
        self.client = await self.connect()
        child = next(iter(self.broker.children.values()))
        child.read_only = frozenset({"echo", "peek"})  # `nap` stands for a write (it takes the store's lock)
        return self

    async def connect(self) -> BrokerConnection:
        client = BrokerConnection(self.spec, self.broker.socket)
        await client.open()
        return client

    @property
    def lock(self) -> asyncio.Lock:
        return next(iter(self.broker.write_locks.values()))

    async def __aexit__(self, *exc: object) -> None:
        await self.client.close()
        self.broker.done.set()
        await self.serving


async def test_a_call_fails_at_the_bound_its_client_sent_and_the_next_write_goes_through(tmp_path):
    async with _Running(tmp_path) as run:
        with pytest.raises(McpCallTimeout):
            await run.client.call_tool("nap", {"seconds": 30}, timeout=0.3)
        assert next(iter(run.broker.children.values())).timeouts == 1  # the broker gave up at that bound
        assert not run.lock.locked()
        other = await run.connect()
        try:
            # the hung write holds nothing: another client's call is answered
            outcome = await other.call_tool("echo", {"text": "still here"}, timeout=20)
        finally:
            await other.close()
        assert outcome.text == "still here"


async def test_a_cancelled_call_fails_in_the_broker_and_frees_the_write_lock(tmp_path):
    async with _Running(tmp_path) as run:
        call = asyncio.create_task(run.client.call_tool("nap", {"seconds": 30}, timeout=60))
        while not run.lock.locked():
            await asyncio.sleep(0.01)
        call.cancel()  # the client sends notifications/cancelled
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(500):
            if not run.lock.locked():
                break
            await asyncio.sleep(0.01)
        assert not run.lock.locked()
        assert run.broker.calls == 1


async def test_a_server_that_answers_none_of_three_abandoned_calls_is_restarted(tmp_path):
    spec = _spec(tmp_path)
    from tmg.broker.child import Spec

    child = Child(Spec(command=spec.command, args=spec.args, env=tuple(sorted(spec.env.items())), cwd=spec.cwd,
                       kind="tools", name="echo"), None)
    await child.ensure()
    first = child.proc.pid
    try:
        # each nap outlives its deadline: the process answers none of them
        for _ in range(3):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(child.call({"name": "nap", "arguments": {"seconds": 30}}), 0.2)
        await child.ensure()
        assert child.starts == 2 and child.proc.pid != first
        answer = await child.call({"name": "echo", "arguments": {"text": "back"}})
        assert answer["content"][0]["text"] == "back"
    finally:
        await child.stop()


async def test_a_slow_server_answering_in_time_is_not_restarted(tmp_path):
    spec = _spec(tmp_path)
    from tmg.broker.child import Spec

    child = Child(Spec(command=spec.command, args=spec.args, env=tuple(sorted(spec.env.items())), cwd=spec.cwd,
                       kind="tools", name="echo"), None)
    await child.ensure()
    try:
        for _ in range(4):
            await asyncio.wait_for(child.call({"name": "nap", "arguments": {"seconds": 0.05}}), 20)
        assert child.starts == 1
    finally:
        await child.stop()


async def test_a_write_handed_off_to_the_broker_outlives_its_clients_bound_and_then_lands(tmp_path):
    spool = tmp_path / "memory" / "spool"
    spool.mkdir(parents=True)
    ahead = spool / "0001.json"
    ahead.write_text("{}")
    async with _Running(tmp_path) as run:
        call = asyncio.create_task(run.client.call_tool("nap", {"seconds": 1.5}, timeout=0.6))
        while not run.lock.locked():
            await asyncio.sleep(0.01)
        (ident, _name, _args), = run.client.in_flight()
        assert await run.client.hand_off({ident: str(ahead)}) == {ident}
        call.cancel()  # the client leaves without waiting (its cancel is ignored for a handed write)
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(400):  # landed past the client's 0.6 s: its write-ahead file goes
            if not ahead.exists():
                break
            await asyncio.sleep(0.05)
        assert not ahead.exists()
        assert next(iter(run.broker.children.values())).timeouts == 0


async def test_a_cached_read_is_kept_per_view_so_a_changed_team_store_is_read_again(tmp_path):
    # The broker sees tmg's writes, not a team file that a pull changed or a link now pointing
    # elsewhere: the client names that state (its view), and another view is another entry.
    state = tmp_path / "team.yaml"
    state.write_text("before")
    async with _Running(tmp_path) as run:
        first = await run.client.call_tool("peek", {"path": str(state)}, timeout=20, cached="team v1")
        state.write_text("after")
        same_view = await run.client.call_tool("peek", {"path": str(state)}, timeout=20, cached="team v1")
        new_view = await run.client.call_tool("peek", {"path": str(state)}, timeout=20, cached="team v2")
    assert (first.text, same_view.text, new_view.text) == ("before", "before", "after")


async def test_a_server_that_reads_nothing_fails_the_call_and_is_restarted_not_buffered_for(tmp_path, monkeypatch):
    monkeypatch.setattr("tmg.broker.child.BUFFER_LIMIT", 64 * 1024)
    spec = _spec(tmp_path)
    from tmg.broker.child import ChildError, Spec

    child = Child(Spec(command=spec.command, args=spec.args, env=tuple(sorted(spec.env.items())), cwd=spec.cwd,
                       kind="tools", name="echo"), None)
    await child.ensure()
    first = child.proc.pid
    os.kill(first, signal.SIGSTOP)  # alive, reading nothing
    # 4 MB: the pipe holds what the kernel gives it (64 KB by default, more on some machines), the
    # rest waits in the broker's memory. One message that size is taken (a server that reads may
    # get one large message); the next, behind it unread, is not.
    pending = asyncio.create_task(child.call({"name": "echo", "arguments": {"text": "x" * 4_000_000}}))
    for _ in range(500):  # until that message waits unread in the broker's buffer
        if child.proc.stdin.transport.get_write_buffer_size() > 0:
            break
        await asyncio.sleep(0.02)
    assert child.proc.stdin.transport.get_write_buffer_size() > 0, "the stopped server's pipe took 4 MB"
    try:
        with pytest.raises(ChildError, match="reads nothing"):
            await asyncio.wait_for(child.call({"name": "echo", "arguments": {"text": "y"}}), 10)
    except TimeoutError:
        pytest.fail("a write to a server that reads nothing was buffered without a bound")
    finally:
        pending.cancel()
        await asyncio.gather(pending, return_exceptions=True)
        await child.ensure()  # the stopped process went; a new one answers
    try:
        assert child.starts == 2 and child.proc.pid != first
        answer = await child.call({"name": "echo", "arguments": {"text": "back"}})
        assert answer["content"][0]["text"] == "back"
    finally:
        await child.stop()


async def test_a_client_that_reads_none_of_its_answers_is_disconnected(tmp_path, monkeypatch):
    monkeypatch.setattr("tmg.broker.child.BUFFER_LIMIT", 256 * 1024)
    from tmg.broker.paths import fingerprint

    async with _Running(tmp_path) as run:
        spec = run.spec
        wire = {"name": spec.name, "command": spec.command, "args": list(spec.args), "env": dict(spec.env),
                "cwd": spec.cwd, "kind": "memory"}
        _reader, writer = await asyncio.open_unix_connection(str(run.broker.socket))
        lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"_meta": {"tmg/server": wire, "tmg/fingerprint": fingerprint()}}}]
        lines += [{"jsonrpc": "2.0", "id": 2 + n, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"text": "y" * 100_000}}} for n in range(60)]
        writer.write(b"".join((json.dumps(line) + "\n").encode() for line in lines))
        await writer.drain()
        for _ in range(1000):  # the broker answers into a socket nobody reads, then lets it go
            if run.broker.clients == 1:  # the test's own client is left
                break
            await asyncio.sleep(0.02)
        assert run.broker.clients == 1
        writer.close()
        # and the broker still serves the others
        assert (await run.client.call_tool("echo", {"text": "fine"}, timeout=20)).text == "fine"
