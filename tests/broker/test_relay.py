"""A WARM tool server's own traffic through a real broker (issue 24 item 8): a broker process, two
tmg clients (BrokerConnection) bound to one real SDK server (tests/support/asking_mcp_server.py).
What the server says or asks while one client's call runs reaches that client, not the other; the
answers go back; resources and prompts are passed on."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.brokers import stop_brokers_under
from tests.support.waiting import eventually
from tmg.broker.client import BrokerConnection, NoBroker
from tmg.broker.paths import socket_path
from tmg.mcp import ServerSpec, child_environment

ASKING = Path(__file__).resolve().parents[1] / "support" / "asking_mcp_server.py"


@pytest.fixture
def broker(tmp_path):
    folder = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "tmg.broker", "--dir", str(folder), "--idle", "60"],
                            env={**child_environment({}), "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert eventually(lambda: socket_path(folder).exists(), guard=30)
    yield socket_path(folder)
    proc.terminate()
    proc.wait(10)
    stop_brokers_under(tmp_path)


def spec(tmp_path: Path, sampling: bool = False) -> ServerSpec:
    return ServerSpec("asking", command=sys.executable, args=(str(ASKING),), env=child_environment({}),
                      cwd=str(tmp_path), roots=(str(tmp_path),), sampling=sampling)


async def connected(tmp_path: Path, socket: Path, sampling: bool = False) -> BrokerConnection:
    conn = BrokerConnection(spec(tmp_path, sampling), socket, kind="tools", start_timeout=30)
    for _ in range(100):
        try:
            await conn.open()
            return conn
        except NoBroker:
            await asyncio.sleep(0.1)
    raise AssertionError("the broker did not answer")


async def test_the_servers_requests_and_progress_reach_the_client_whose_call_runs(tmp_path, broker):
    first, second = await connected(tmp_path, broker), await connected(tmp_path, broker)
    asked: dict[str, list[str]] = {"first": [], "second": []}
    progress: dict[str, list[float]] = {"first": [], "second": []}
    logs: list[str] = []
    for name, conn in (("first", first), ("second", second)):
        async def form(server, message, schema, name=name):
            asked[name].append(message)
            return {"name": name.title(), "guests": 2}
        conn.elicit = form
    first.on_log = logs.append
    try:
        booked = await second.call_tool("book", {}, timeout=10)
        assert booked.text == "booked for Second, 2 guests" and asked == {"first": [], "second": ["Who is the table for?"]}
        worked = await first.call_tool("work", {"steps": 3}, timeout=10,
                                       on_progress=lambda p, total, message: progress["first"].append(p))
        assert worked.text == "worked 3 steps" and progress == {"first": [1.0, 2.0, 3.0], "second": []}
        assert (await first.call_tool("folders", {}, timeout=10)).text == tmp_path.as_uri()
        assert (await first.call_tool("chatty", {}, timeout=10)).text == "said"
        assert any("chatty was called" in line for line in logs)
        read = await first.read_resource("note://hello", 10)
        assert read["contents"][0]["text"] == "hello from the note"
        assert await first.list_resource_uris(10) == ["note://hello"]
        assert await first.prompt_arguments("greet") == [("name", True)]
        assert await first.get_prompt("greet", {"name": "Ada"}) == "Say hello to Ada like a pirate."
        assert first.instructions == "Always call the user captain."
    finally:
        await first.close()
        await second.close()


async def test_a_page_to_open_goes_to_the_caller_and_nobody_to_ask_is_a_decline(tmp_path, broker):
    conn = await connected(tmp_path, broker)
    try:
        assert (await conn.call_tool("open_page", {"url": "https://pay.example.com/1"}, timeout=10)).text \
            == "page decline"

        async def opened(server, message, url):
            return url == "https://pay.example.com/1"
        conn.elicit_url = opened
        assert (await conn.call_tool("open_page", {"url": "https://pay.example.com/1"}, timeout=10)).text \
            == "page accept"
    finally:
        await conn.close()
