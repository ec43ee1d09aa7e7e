"""`python -m fakeplur` as a real stdio server, through tmg's own connection layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakeplur.snapshot import load_snapshot
from tests.support.plur_server import fakeplur_spec, lingering, process_gone, running
from tests.support.waiting import eventually
from tmg.mcp import McpStartError, ServerSpec, child_environment
from tmg.mcp.connection import McpConnection


def test_serves_the_snapshot_and_persists(tmp_path: Path) -> None:
    store, pidfile = tmp_path / "store.json", tmp_path / "pid"
    spec = fakeplur_spec(tmp_path, "lean", store=store, seed=["Seeded before start"], reject=("plur_capture",))
    with running(lingering(spec, pidfile)) as server:
        assert list(server.tools) == [t["name"] for t in load_snapshot().tools("lean")]
        out = server.call("plur_learn", {"statement": "Learned over stdio"})
        assert not out.is_error and out.data["id"].startswith("ENG-")
        out = server.call("plur_admin", {"action": "plur_capture", "args": {"summary": "x"}})
        assert out.is_error and "rejected" in out.data["error"]
        pid = int(pidfile.read_text())
        assert not process_gone(pid)
    # The child does not exit on stdin EOF: closing stopped it rather than waiting for it.
    assert eventually(lambda: process_gone(pid))
    assert "Learned over stdio" in store.read_text() and "Seeded before start" in store.read_text()


def test_child_environment_is_minimal() -> None:
    env = child_environment({"FAKE_PLUR_STORE": "/x"}, base={"PATH": "/bin", "HOME": "/h",
                                                             "OPENAI_API_KEY": "sk-secret", "LANG": "C"})
    assert env == {"PATH": "/bin", "HOME": "/h", "LANG": "C", "FAKE_PLUR_STORE": "/x"}


async def test_missing_command_is_a_start_error() -> None:
    with pytest.raises(McpStartError):
        async with McpConnection(ServerSpec("x", command="/nonexistent/fakeplur")):
            pass


async def test_a_server_that_exits_is_a_start_error(tmp_path: Path) -> None:
    spec = ServerSpec("x", command="python3", args=("-c", "pass"), env=child_environment({}), cwd=str(tmp_path))
    with pytest.raises(McpStartError):
        async with McpConnection(spec, start_timeout=5):
            pass
