"""Reaching a memory server (or a WARM tool server) through the broker: find it, start it when there is none, and fall
back to spawning the server directly when the broker cannot be had (never worse than before).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from tmg.broker.client import BrokerConnection, BrokerError, NoBroker, StaleBroker
from tmg.broker.paths import LOG_NAME, TOOLS_UMASK_VAR, broker_enabled, idle_seconds, socket_path
from tmg.environment import debug_env
from tmg.mcp.errors import McpStartError
from tmg.mcp.outcome import ToolOutcome
from tmg.mcp.spec import child_environment
from tmg.mcp.tool_server import Connection
from tmg.paths import runtime_dir, tmg_home

Route = Literal["warm broker", "cold start (broker started)", "cold start (direct spawn)"]
# How long a run waits for a broker it started before spawning the server itself. Most of a
# broker's start is the server's own, which a direct spawn would pay as well.
BROKER_START_WAIT_S = 10.0
_POLL_S = 0.02


def launch_broker(env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """Start a broker, detached: its own session and process group, no terminal, no provider keys
    (its environment is the minimal base; each server gets its declared ENV over that base), and
    a umask of 077: its files and its memory servers' stores are private (`child_umask`)."""
    from tmg.private_files import PRIVATE_UMASK, current_umask, private_dirs

    folder = runtime_dir(env)
    home = private_dirs(tmg_home(env))
    package_root = str(Path(__file__).resolve().parents[2])  # the tmg it runs is ours
    broker_env = child_environment(None, env)
    broker_env["PYTHONPATH"] = package_root
    broker_env[TOOLS_UMASK_VAR] = f"{current_umask():o}"
    return subprocess.Popen(
        [sys.executable, "-m", "tmg.broker", "--dir", str(folder), "--idle", str(idle_seconds(env)),
         "--log", str(home / LOG_NAME), *(["--debug"] if debug_env(env) else [])],
        env=broker_env, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, umask=PRIVATE_UMASK,
    )


# What a tool server asks of its client goes where its connection's are set (tmg.mcp.tool_server).
_PASSED_ON = ("elicit", "elicit_url", "sample", "on_log")


class WarmConnection(Connection):
    """A server's connection through the broker when it can, else direct (a memory server for
    MemoryRuntime, `kind="memory"`; a WARM tool server, `kind="tools"`).

    `route` says which (for `--debug`, `/memory` and `/mcp`). Through the broker a WARM tool server
    is reached as a direct one is: its tools, resources and prompts, and its own requests and
    notifications passed on to this client (tmg.broker.relay); the broker restarts it
    (`tmg memory stop`), not tmg.
    """

    def __init__(self, spec: Any, *, start_timeout: float, env: Mapping[str, str] | None = None,
                 kind: str = "memory") -> None:
        self.spec = spec
        self.kind = kind
        self.start_timeout = start_timeout
        self.env = os.environ if env is None else env
        self.route: Route | None = None
        self._conn: Any = None
        self._launched: subprocess.Popen[bytes] | None = None

    @property
    def tool_names(self) -> frozenset[str]:
        return self._conn.tool_names if self._conn is not None else frozenset()

    @property
    def tools(self) -> Any:
        return self._conn.tools if self._conn is not None else {}

    @property
    def caches_reads(self) -> bool:
        """Through the broker: a call may be marked `cached` (a direct spawn keeps no cache)."""
        return isinstance(self._conn, BrokerConnection)
    @property  # type: ignore[override]
    def tools_changed(self) -> bool:
        return self._conn is not None and self._conn.tools_changed

    @property  # type: ignore[override]
    def instructions(self) -> str:
        return self._conn.instructions if self._conn is not None else ""

    async def refresh_tools(self) -> None:
        await self._conn.refresh_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0, *,
                        max_timeout: float | None = None, on_progress: Any = None,
                        cached: bool | str = False) -> ToolOutcome:
        extra = {"cached": cached} if cached and self.caches_reads else {}
        return await self._conn.call_tool(name, arguments, timeout=timeout, max_timeout=max_timeout,
                                          on_progress=on_progress, **extra)

    def in_flight(self) -> list[tuple[int, str, dict[str, Any]]]:
        return self._conn.in_flight() if isinstance(self._conn, BrokerConnection) else []

    async def hand_off(self, ahead: dict[int, str]) -> set[int]:
        """Calls left to the broker as this run ends (`BrokerConnection.hand_off`); none when direct."""
        return await self._conn.hand_off(ahead) if isinstance(self._conn, BrokerConnection) else set()

    async def detach(self, name: str, arguments: dict[str, Any], answer_file: Path, by: str,
                     env: dict[str, str] | None = None) -> bool | None:
        """Run a tools/call in the broker after this run has gone (BrokerConnection.detach);
        None when this connection is a direct spawn (nothing outlives the run)."""
        if not isinstance(self._conn, BrokerConnection):
            return None
        return await self._conn.detach(name, arguments, answer_file, by, env)

    async def start(self) -> None:
        socket_file = socket_path(runtime_dir(self.env))
        deadline = time.monotonic() + min(self.start_timeout, BROKER_START_WAIT_S)
        while True:
            conn = BrokerConnection(self.spec, socket_file, self.kind, self.start_timeout)
            try:
                await conn.open()
            except (NoBroker, StaleBroker):
                if self._launched is None:
                    self._launched = launch_broker(self.env)
                elif self._launched.poll() is not None and self._launched.returncode != 0 \
                        or time.monotonic() > deadline:
                    return await self._direct()
                await asyncio.sleep(_POLL_S)
                continue
            except BrokerError as exc:
                raise McpStartError(str(exc)) from exc
            self._adopt(conn)
            self.route = "warm broker" if self._launched is None else "cold start (broker started)"
            return

    async def _direct(self) -> None:
        from tmg.mcp.connection import McpConnection

        conn = McpConnection(self.spec, start_timeout=self.start_timeout)
        self._pass_on(conn)  # before its start: a server may ask while starting
        await conn.start()
        self._conn = conn
        self.route = "cold start (direct spawn)"

    def _pass_on(self, conn: Any) -> None:
        for name in _PASSED_ON:
            setattr(conn, name, getattr(self, name))

    def _adopt(self, conn: Any) -> None:
        self._pass_on(conn)
        self._conn = conn

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()

    async def read_resource(self, uri: str, timeout: float) -> dict[str, Any]:
        return dict(await self._conn.read_resource(uri, timeout))

    async def list_resource_uris(self, timeout: float) -> list[str]:
        return list(await self._conn.list_resource_uris(timeout))

    async def prompt_arguments(self, name: str) -> list[tuple[str, bool]] | None:
        return await self._conn.prompt_arguments(name)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> str:
        return str(await self._conn.get_prompt(name, arguments))


MemoryConnection = WarmConnection  # what memory has always called it


def connect(spec: Any, start_timeout: float, kind: str = "memory") -> Any:
    """The broker for a stdio server unless TMG_MEMORY_BROKER=0 (MemoryRuntime's connect, and a
    WARM tool server's with `kind="tools"`)."""
    if spec.command is not None and broker_enabled(os.environ):
        return WarmConnection(spec, start_timeout=start_timeout, kind=kind)
    from tmg.mcp.connection import McpConnection

    return McpConnection(spec, start_timeout=start_timeout)
