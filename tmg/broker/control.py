"""Looking at and stopping the broker from the command line (`tmg memory status|stop`, doctor)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tmg.broker.client import BrokerError, NoBroker, NotPrivate, ask
from tmg.broker.paths import broker_file, socket_path
from tmg.paths import runtime_dir


@dataclass
class BrokerState:
    """What is known about this user's broker: its status answer, or why there is none."""

    folder: Path
    socket: Path
    status: dict[str, Any] | None = None
    problem: str | None = None


def probe(env: Mapping[str, str]) -> BrokerState:
    folder = runtime_dir(env)
    state = BrokerState(folder, socket_path(folder))
    try:
        state.status = ask(state.socket, "tmg/status")
    except NotPrivate as exc:
        state.problem = f"{exc}; tmg does not use it (`chmod 700 {state.socket.parent}`)"
    except NoBroker:
        if state.socket.exists():
            state.problem = f"{state.socket} exists but nothing answers on it (a broker that died); " \
                            "the next run replaces it"
    except (BrokerError, OSError, ValueError) as exc:
        state.problem = f"the broker answered badly ({exc}); run `tmg memory stop`"
    return state


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _size(path: str) -> str:
    total = 0
    for root, _dirs, files in os.walk(os.path.expanduser(path)):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return f"{total / 1024:.0f} KiB" if total < 1024 * 1024 else f"{total / 1024 / 1024:.1f} MiB"


def summary(status: dict[str, Any]) -> str:
    """One line: pid, uptime, servers, calls."""
    servers = status.get("servers", [])
    return (f"running (pid {status['pid']}, up {_duration(status['uptime'])}, {len(servers)} server(s), "
            f"{status['calls']} call(s) served, exits after {_duration(status['idle_exit'])} idle)")


def status_lines(state: BrokerState) -> list[str]:
    if state.status is None:
        lines = [f"broker: not running ({state.problem})" if state.problem else
                 "broker: not running (the next tmg that needs memory starts one)"]
        return lines + [f"socket: {state.socket}"]
    status = state.status
    lines = [f"broker: {summary(status)}", f"socket: {status['socket']}"]
    for server in status.get("servers", []):
        alive = "up" if server["alive"] else "down (started again by the next call)"
        writer = f"; its writes through pid {server['writer_pid']}" if server.get("writer_pid") else ""
        lines.append(f"server {server['name'] or server['command']}: {alive}, pid {server['pid']}, "
                     f"{server['tools']} tools, {server['calls']} call(s), started {server['starts']} time(s), "
                     f"store {server['store']} ({_size(server['store'])}){writer}")
    return lines


def stop(env: Mapping[str, str], wait: float = 5.0) -> int | None:
    """Ask the broker to exit and wait for it; its pid, or None when none was running."""
    folder = runtime_dir(env)
    try:
        pid = int(ask(socket_path(folder), "tmg/stop")["pid"])
    except NoBroker:
        try:
            pid = int(broker_file(folder, "pid").read_text())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        os.kill(pid, 15)  # a broker that does not answer, but runs: SIGTERM stops its servers too
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    return pid
