"""Looking at and stopping the broker from the command line (`tmg memory status|stop`, doctor)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tmg.broker.client import BrokerError, NoBroker, NotPrivate, ask
from tmg.broker.paths import LOCK_NAME, PID_NAME, socket_path
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
    if status.get("detached"):  # runs on after the session that asked for it (a memory sync)
        lines.append(f"running after its session: {', '.join(status['detached'])}")
    for server in status.get("servers", []):
        alive = "up" if server["alive"] else "down (started again by the next call)"
        lines.append(f"server {server['name'] or server['command']}: {alive}, pid {server['pid']}, "
                     f"{server['tools']} tools, {server['calls']} call(s), started {server['starts']} time(s), "
                     f"store {server['store']} ({_size(server['store'])})")
    return lines


def stop(env: Mapping[str, str], wait: float = 5.0) -> int | None:
    """Ask the broker to exit and wait for it; its pid, or None when none was running.

    A broker that does not answer is signalled only once the process behind `broker.pid` is
    known to be it (see :func:`is_our_broker`): a stale pid file may name anybody's process now."""
    folder = runtime_dir(env)
    try:
        pid = int(ask(socket_path(folder), "tmg/stop")["pid"])
    except NoBroker:
        pid_file = folder / PID_NAME
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            return None
        if not is_our_broker(pid, folder):
            pid_file.unlink(missing_ok=True)  # stale: the broker it named is gone
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


def is_our_broker(pid: int, folder: Path) -> bool:
    """Whether ``pid`` is the broker of ``folder``: a process of this user, running `tmg.broker
    --dir <folder>`, started before it wrote its pid file, while the folder's broker lock is held
    (a broker holds it for its life). Anything unsure is no."""
    proc = Path(f"/proc/{pid}")
    try:
        if pid <= 0 or proc.stat().st_uid != os.getuid():
            return False
        argv = (proc / "cmdline").read_bytes().split(b"\0")
        started = _start_time(proc)
        written = (folder / PID_NAME).stat().st_mtime
    except (OSError, ValueError):
        return False
    given = argv[argv.index(b"--dir") + 1] if b"--dir" in argv[:-1] else b""
    if b"tmg.broker" not in argv or os.path.realpath(os.fsdecode(given)) != os.path.realpath(folder):
        return False
    return started <= written + 1.0 and _lock_held(folder)  # a pid reused later started after the file


def _start_time(proc: Path) -> float:
    """When the process started, in seconds since the epoch (/proc/<pid>/stat field 22: clock
    ticks after boot)."""
    ticks = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                if line.startswith("btime "))
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _lock_held(folder: Path) -> bool:
    """True while some process holds the broker lock of ``folder`` (taking it here means none does)."""
    import fcntl

    try:
        with open(folder / LOCK_NAME, "rb") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(lock, fcntl.LOCK_UN)
            return False
    except OSError:
        return False
