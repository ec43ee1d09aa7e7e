"""`tmg memory status` counts memory servers per store: a store reached from two working
folders (a broker process for each) is one server, with both processes named."""

from __future__ import annotations

from types import SimpleNamespace

from tmg.broker.control import BrokerState, status_lines
from tmg.broker.daemon import Broker, Spec
from tmg.cli.memory_status import one_per_store


def _spec(cwd: str, home: str) -> Spec:
    return Spec(command="node", args=("plur.js",), env=(("HOME", home),), cwd=cwd, kind="memory", name="plur")


def _status(tmp_path, *specs: Spec) -> BrokerState:
    broker = Broker(tmp_path, idle=900.0)
    for pid, spec in enumerate(specs, start=101):
        child = broker.child_for(spec)
        # What the status reads of a running child: its process, and its reader still reading.
        child.proc, child._reader = SimpleNamespace(pid=pid, returncode=None), SimpleNamespace(done=lambda: False)
        child.calls, child.starts = 3, 1
    return BrokerState(tmp_path, tmp_path / "broker.sock", status=broker.status())


def test_one_store_reached_from_two_folders_is_one_server_with_both_pids(tmp_path):
    state = _status(tmp_path, _spec("/work/a", "/home/u"), _spec("/work/b", "/home/u"), _spec("/work/a", "/home/v"))
    assert "3 server(s)" in status_lines(state)[0]  # as the broker sees it: three processes
    lines = status_lines(one_per_store(state))
    assert "2 server(s)" in lines[0]
    servers = [line for line in lines if line.startswith("server plur:")]
    assert len(servers) == 2
    assert servers[0].startswith("server plur: up, pid 101 and 102 (a process per working folder), 0 tools, "
                                 "6 call(s), started 2 time(s), store /home/u/.plur")
    assert servers[1].startswith("server plur: up, pid 103, 0 tools, 3 call(s), started 1 time(s), store /home/v/.plur")


def test_no_broker_is_said_as_before(tmp_path):
    state = BrokerState(tmp_path, tmp_path / "broker.sock")
    assert status_lines(one_per_store(state)) == status_lines(state)
