"""One server the broker keeps warm: a stdio child process, initialized once, its tools listed once,
restarted by the next client that needs it after it died. Writes to one memory store go one at a
time; calls known to only read do not wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tmg.broker.paths import child_umask
from tmg.mcp.errlog import rotate

PROTOCOL_VERSION = "2025-06-18"
LINE_LIMIT = 64 * 1024 * 1024
_START_TIMEOUT_S = 30.0
# Tools known to only read; any other call to a store waits for the write before it (per store).
_READS = ("plur_inject", "plur_recall", "plur_status", "plur_timeline", "plur_list", "plur_search",
          "plur_session_start", "plur_profile", "plur_packs_list", "plur_stores_list")
log = logging.getLogger("tmg.broker")


@dataclass(frozen=True)
class Spec:
    """A server to keep warm: what makes two clients share one child."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = field(repr=False)  # the declared ENV may hold tokens: never in a repr (logs)
    cwd: str | None
    # "memory": writes to one store go one at a time; "tools" (a WARM tool server): calls as they come.
    kind: str = "memory"
    name: str = field(default="", compare=False)
    errlog: str | None = field(default=None, compare=False)

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Spec:
        return cls(command=str(data["command"]), args=tuple(str(a) for a in data.get("args", ())),
                   env=tuple(sorted((str(k), str(v)) for k, v in dict(data.get("env") or {}).items())),
                   cwd=data.get("cwd") or None, kind=str(data.get("kind") or "memory"),
                   name=str(data.get("name", "")), errlog=data.get("errlog"))

    def store(self) -> str:
        """Which store its writes go to (PLUR's: PLUR_PATH, else ~/.plur of its HOME)."""
        env = dict(self.env)
        return env.get("PLUR_PATH") or os.path.join(env.get("HOME", "~"), ".plur")


class ChildError(RuntimeError):
    """The child could not be reached, or answered with a JSON-RPC error (`error`, forwarded as is)."""

    def __init__(self, message: str, error: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.error = error


class Child:
    """One server process over stdio, initialized once, its tools listed once."""

    def __init__(self, spec: Spec, write_lock: asyncio.Lock | None) -> None:
        self.spec = spec
        self.write_lock = write_lock
        self.proc: asyncio.subprocess.Process | None = None
        self.init_result: dict[str, Any] = {}
        self.tools: list[dict[str, Any]] = []
        self.read_only: frozenset[str] = frozenset()
        self.calls = 0
        self.starts = 0
        self.started_at = 0.0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[None] | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and self._reader is not None \
            and not self._reader.done()

    async def ensure(self) -> None:
        """Started and initialized: at once when it is up; (re)started when it is not."""
        if self.alive and self._starting is None:
            return
        if self._starting is None:
            self._starting = asyncio.create_task(self._start())
        task = self._starting
        try:
            await asyncio.shield(task)
        finally:
            if task.done() and self._starting is task:
                self._starting = None

    async def _start(self) -> None:
        spec = self.spec
        errlog: Any = asyncio.subprocess.DEVNULL
        if spec.errlog:
            rotate(Path(spec.errlog))
            errlog = open(spec.errlog, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            self.proc = await asyncio.create_subprocess_exec(
                spec.command, *spec.args, env=dict(spec.env), cwd=spec.cwd, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=errlog, start_new_session=True, limit=LINE_LIMIT,
                umask=child_umask(spec.kind))
        except OSError as exc:
            raise ChildError(f"cannot start {spec.command!r}: {exc}") from exc
        finally:
            if not isinstance(errlog, int):
                errlog.close()
        self.starts += 1
        self.started_at = time.time()
        log.info("server %s started (pid %s, start %d)", spec.name, self.proc.pid, self.starts)
        self._reader = asyncio.create_task(self._read(self.proc))
        try:
            async with asyncio.timeout(_START_TIMEOUT_S):
                self.init_result = await self.request("initialize", {
                    "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                    "clientInfo": {"name": "tmg-broker", "version": "0"}})
                self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                tools: list[dict[str, Any]] = []
                cursor = None
                while True:
                    listed = await self.request("tools/list", {"cursor": cursor} if cursor else {})
                    tools += listed.get("tools", [])
                    cursor = listed.get("nextCursor")
                    if not cursor:
                        break
        except (ChildError, TimeoutError) as exc:
            await self.stop()
            raise ChildError(f"{spec.name or spec.command}: {exc or 'timed out'}") from exc
        self.tools = tools
        self.read_only = frozenset(t["name"] for t in tools if (t.get("annotations") or {}).get("readOnlyHint"))

    def is_read(self, tool: str) -> bool:
        return tool in self.read_only or tool.startswith(_READS)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its result; ChildError for an error answer or a dead child."""
        self._next_id += 1
        ident = self._next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        try:
            self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(ident, None)

    async def call(self, params: dict[str, Any]) -> dict[str, Any]:
        """A tools/call, forwarded unchanged; writes to one store one at a time."""
        self.calls += 1
        if self.write_lock is None or self.is_read(str(params.get("name", ""))):
            return await self.request("tools/call", params)
        async with self.write_lock:
            return await self.request("tools/call", params)

    def _send(self, message: dict[str, Any]) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise ChildError("the server is not running")
        try:
            proc.stdin.write((json.dumps(message) + "\n").encode())
        except (OSError, RuntimeError) as exc:
            raise ChildError(f"the server went away ({exc})") from exc

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        try:
            while line := await proc.stdout.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                if "method" in message:  # a request or notification from the server
                    if "id" in message:
                        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
                        if message["method"] == "ping":
                            answer["result"] = {}
                        else:
                            answer["error"] = {"code": -32601, "message": "not supported by tmg"}
                        with contextlib.suppress(ChildError):
                            self._send(answer)
                    continue
                future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
                if future is None or future.done():
                    continue
                if "error" in message:
                    error = message["error"] or {}
                    future.set_exception(ChildError(str(error.get("message", error)), error))
                else:
                    future.set_result(message.get("result") or {})
        except (OSError, ValueError) as exc:
            log.warning("server %s: reading failed: %s", self.spec.name, exc)
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ChildError("the server exited with the call in flight"))
            log.info("server %s: output closed (pid %s)", self.spec.name, proc.pid)

    async def stop(self) -> None:
        """Close stdin, a short grace, then the process group goes (PLUR's writes are synchronous)."""
        proc = self.proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                proc.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 0.3)
                break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # anything it left in its group
        if self._reader is not None:
            self._reader.cancel()
