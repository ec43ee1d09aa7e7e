"""Start the real PLUR server (pinned, from npm) or fakeplur for tests, and talk to it.

Both are started the way tmg starts a memory server: through `tmg.mcp`, with a fresh
HOME, a neutral working directory and an environment built from a minimal base (no provider
keys). `ServerThread` runs the connection on its own event loop in a thread, so module-scoped
fixtures and plain sync tests can share one server (a start costs about 0.65 s for PLUR).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from tmg.mcp import ServerSpec, ToolOutcome, ToolSpec, child_environment
from tmg.mcp.connection import McpConnection

REPO = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO / "scripts" / "install-plur"
PLUR_VERSION = "0.20.0"


class PlurUnavailable(RuntimeError):
    """node or npm is missing: the only reason a live test may skip."""


def real_plur_entry() -> Path:
    """The pinned server's dist/index.js, installing it first if needed (idempotent, ~15 s once).

    Raises:
        PlurUnavailable: node is absent, or the package is not installed and npm is absent.
        RuntimeError: the install failed for any other reason (a hard failure, not a skip).
    """
    if shutil.which("node") is None:
        raise PlurUnavailable("node is not installed")
    done = subprocess.run([str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=600)
    if done.returncode == 127:
        raise PlurUnavailable(done.stderr.strip() or "npm is not installed")
    if done.returncode != 0:
        raise RuntimeError(f"scripts/install-plur failed: {done.stderr.strip()}")
    return Path(done.stdout.strip().splitlines()[-1])


def _home(root: Path) -> tuple[Path, Path]:
    """A fresh HOME and, inside it, an empty working directory (no .plur.yaml above it to find)."""
    home = root / "home"
    cwd = home / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    return home, cwd


def real_plur_spec(root: Path, profile: str, entry: Path | None = None) -> ServerSpec:
    """The real server with keyword search only, a fresh HOME under `root`, and `profile`."""
    home, cwd = _home(root)
    env = {"HOME": str(home), "PLUR_DISABLE_EMBEDDINGS": "1", "PLUR_TOOL_PROFILE": profile}
    return ServerSpec(
        name="plur",
        command="node",
        args=(str(entry or real_plur_entry()),),
        env=child_environment(env),
        cwd=str(cwd),
        errlog=str(root / "plur-stderr.log"),
    )


def fakeplur_spec(
    root: Path,
    profile: str,
    *,
    store: Path | None = None,
    seed: list[Any] | None = None,
    reject: tuple[str, ...] = (),
    delays: Mapping[str, float] | None = None,
) -> ServerSpec:
    """`python -m fakeplur` with the same kind of environment as the real one, plus its knobs."""
    home, cwd = _home(root)
    env = {"HOME": str(home), "PLUR_TOOL_PROFILE": profile, "PYTHONPATH": str(REPO)}
    if store is not None:
        env["FAKE_PLUR_STORE"] = str(store)
    if seed is not None:
        env["FAKE_PLUR_SEED"] = json.dumps(seed)
    if reject:
        env["FAKE_PLUR_REJECT"] = ",".join(reject)
    if delays:
        env["FAKE_PLUR_DELAY"] = ",".join(f"{k}={v}" for k, v in delays.items())
    return ServerSpec(
        name="plur",
        command=sys.executable,
        args=("-m", "fakeplur"),
        env=child_environment(env),
        cwd=str(cwd),
        errlog=str(root / "fakeplur-stderr.log"),
    )


# fakeplur, but staying alive once its stdin closes (PLUR takes 2 to 3 s to exit by itself; this one
# takes minutes, far past any bound of a close), after writing its pid to argv[1]: only a close that
# stops the child gets rid of it in time.
_LINGER = """
import os, sys, time
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
from fakeplur.server import main
main()
time.sleep(120)
"""


def lingering(spec: ServerSpec, pidfile: Path) -> ServerSpec:
    """`spec` (a `fakeplur_spec`) run so that it does not exit on stdin EOF (for minutes); its pid lands in `pidfile`."""
    return replace(spec, args=("-c", _LINGER, str(pidfile)))


def process_gone(pid: int) -> bool:
    """True once `pid` has exited (reaped, or a zombie awaiting its parent)."""
    if not Path("/proc/self").exists():  # no procfs: a zombie counts as alive here
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


class ServerThread:
    """A started MCP server driven from sync code: its connection lives on a private loop."""

    def __init__(self, spec: ServerSpec, broker_home: Path | None = None) -> None:
        """`broker_home`: reach the server through a memory broker run under that TMG_HOME (the
        broker is started, and must be the way in: a fallback to a direct spawn fails the start)."""
        self.spec = spec
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"mcp-{spec.name}", daemon=True)
        self._thread.start()
        self.connection: Any = McpConnection(spec)
        if broker_home is not None:
            from tmg.broker.launch import MemoryConnection

            self.connection = MemoryConnection(spec, start_timeout=60, env={**os.environ, "TMG_HOME": str(broker_home)})

    def _run(self, coro: Any, timeout: float) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self) -> ServerThread:
        self._run(self.connection.start(), 60)
        route = getattr(self.connection, "route", None)
        if route is not None and "broker" not in route:
            raise RuntimeError(f"{self.spec.name}: the broker could not be reached ({route})")
        return self

    @property
    def tools(self) -> dict[str, ToolSpec]:
        return self.connection.tools

    def call(self, name: str, arguments: dict[str, Any], timeout: float = 15.0) -> ToolOutcome:
        """One tools/call; raises McpCallError when the call itself failed."""
        return self._run(self.connection.call_tool(name, arguments, timeout=timeout), timeout + 5)

    def run(self, coro: Any, timeout: float = 30.0) -> Any:
        """Run any coroutine (for example a PlurClient call) on the server's loop."""
        return self._run(coro, timeout)

    def close(self) -> None:
        try:
            self._run(self.connection.close(), 10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
            self._loop.close()


@contextmanager
def running(spec: ServerSpec, broker_home: Path | None = None) -> Iterator[ServerThread]:
    """Start a server for the duration of a with-block (through a broker under `broker_home`)."""
    server = ServerThread(spec, broker_home)
    try:
        server.start()
        yield server
    finally:
        server.close()


def stderr_tail(spec: ServerSpec, limit: int = 2000) -> str:
    """The end of a server's stderr log, for failure messages."""
    if not spec.errlog or not Path(spec.errlog).exists():
        return ""
    return Path(spec.errlog).read_text(errors="replace")[-limit:]
