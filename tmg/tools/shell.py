"""shell: one command in the working folder, bounded in time and output, without tmg's secrets.

The command runs under `bash -c` (`sh -c` without bash) in a session of its own, so a timeout or
a cancel (Ctrl-C, the end of the turn) kills its whole process group, not just the shell. Its
environment is the minimal one MCP servers get (PATH, HOME, LANG, ...: child_environment), minus
any variable whose value holds a configured secret, plus settings that keep tools from waiting
on a terminal that is not there (pagers, git's credential prompt). stdin is empty.

With a sandbox (tmg.tools.sandbox) the command runs inside bubblewrap: it writes only the working
folder and a few more, without network; what the sandbox stopped is said to the model
(tmg.tools.sandbox_note). The model may ask for one command to run outside it (`unsandboxed`): that
call is marked for the permission engine, which asks the user every time.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tmg.mcp.spec import child_environment
from tmg.permissions.action import ToolAction
from tmg.tools.registry import ToolResult
from tmg.tools.sandbox import Confinement, Sandbox, SandboxUnavailable

MAX_TIMEOUT_S = 600.0
STDOUT_CAP = 12_000  # bytes kept of stdout (its head and its tail); stderr gets STDERR_CAP
STDERR_CAP = 4_000
_KILL_GRACE_S = 1.0   # after SIGTERM, before SIGKILL
_DRAIN_S = 1.0        # after the command exits, for output still in flight
_QUIET = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


class _Capture:
    """A stream's head and tail within a cap, and how much was cut from the middle."""

    def __init__(self, cap: int) -> None:
        self.half = cap // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            del self.tail[:-self.half]

    def text(self) -> str:
        if b"\0" in self.head or b"\0" in self.tail:
            return f"[binary output, {self.total:,} bytes; redirect it to a file instead]"
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if cut <= 0:
            return head + tail
        return (f"{head}\n[... {cut:,} bytes cut from the middle; redirect the output to a file and read it "
                f"with read_file (offset/limit) or grep ...]\n{tail}")


class ShellTool:
    name = "shell"
    description = ("Run a shell command (bash -c) in the working directory; stdin is empty. Returns the "
                   "exit code, stdout and stderr (long output is cut in the middle).")

    def __init__(self, cwd: Path, env: Mapping[str, str], default_timeout: Callable[[], float] = lambda: 30.0,
                 secret: Callable[[str], bool] = lambda _v: False, sandbox: Sandbox | None = None) -> None:
        self._cwd = cwd
        self._default_timeout = default_timeout
        self._sandbox = sandbox
        # The calls whose description told the permission engine they run outside the sandbox
        # (by the identity of their arguments): only those may. A call never described stays inside.
        self._outside: set[int] = set()
        base = child_environment(None, base=env)
        self._env = {k: v for k, v in base.items() if not secret(v)} | _QUIET
        self._shell = shutil.which("bash") or "/bin/sh"
        self.parameters = {
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "timeout": {"type": "integer", "description": f"Seconds before it is killed (at most {MAX_TIMEOUT_S:g})"},
                "unsandboxed": {"type": "boolean", "description": (
                    "Run outside tmg's OS sandbox (writes anywhere, network). Only after this command "
                    "failed because of the sandbox; the user is asked every time.")},
            },
            "required": ["command"],
        }

    def action(self, arguments: dict[str, Any]) -> ToolAction:
        command = str(arguments.get("command", ""))
        outside = arguments.get("unsandboxed") is True and self._sandbox is not None and self._sandbox.active()
        if outside:
            self._outside.add(id(arguments))
            return ToolAction(self.name, "run", command=command, preview=f"[outside the sandbox] {command}",
                              outside_sandbox=True)
        self._outside.discard(id(arguments))
        return ToolAction(self.name, "run", command=command, preview=command)

    def time_limit(self, arguments: dict[str, Any]) -> float:
        """How long this call may run: the model's `timeout`, else the configured tool timeout."""
        try:
            asked = float(arguments.get("timeout") or 0)
        except (TypeError, ValueError):
            asked = 0.0
        return min(asked, MAX_TIMEOUT_S) if asked > 0 else self._default_timeout()

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult("error: give the command to run", is_error=True)
        limit = self.time_limit(arguments)
        try:
            confinement = self._confinement(arguments)
        except SandboxUnavailable as exc:
            return ToolResult(f"error: {exc}", is_error=True)
        argv = [*(confinement.prefix if confinement else ()), self._shell, "-c", command]
        # Shielded: a cancel during the start must not leave the group running (asyncio would
        # kill only the shell, then wait for pipes its children still hold).
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv, cwd=self._cwd, env=self._env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True))
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            spawn.add_done_callback(_kill_when_started)
            raise
        except OSError as exc:
            return ToolResult(f"error: could not start {argv[0]}: {exc}", is_error=True)
        out, err = _Capture(STDOUT_CAP), _Capture(STDERR_CAP)
        readers = [asyncio.ensure_future(_pump(proc.stdout, out)), asyncio.ensure_future(_pump(proc.stderr, err))]
        try:
            timed_out = not await _exited(proc, readers, limit)
            if timed_out:
                await _stop(proc)
            # Output still in the pipes; a background job that keeps them open is not waited for.
            await asyncio.wait(readers, timeout=_DRAIN_S)
        except BaseException:  # cancelled (Ctrl-C, the registry's bound): the whole group goes
            _signal(proc, signal.SIGKILL)
            try:
                await _exited(proc, [], _KILL_GRACE_S)  # reaped, so its pipes can be closed below
            except BaseException:  # noqa: BLE001 - a second cancel: the first one is raised
                pass
            raise
        finally:
            for reader in readers:
                reader.cancel()
            if proc.returncode is not None and not all(r.done() and not r.cancelled() for r in readers):
                # Pipes a background job still holds: closed on our side now, not at garbage
                # collection (after the loop is gone). Only once reaped: close() would reap it itself.
                transport = getattr(proc, "_transport", None)
                if transport is not None:
                    transport.close()
        report = _report(proc.returncode, out, err, limit if timed_out else None)
        if confinement is not None:
            from tmg.tools.sandbox_note import sandbox_note

            report += sandbox_note(confinement, err.text() + "\n" + out.text())
        return ToolResult(report, is_error=timed_out)

    def _confinement(self, arguments: dict[str, Any]) -> Confinement | None:
        """This call's sandbox; None outside it: no sandbox, or the user was asked about this call."""
        if self._sandbox is None:
            return None
        if id(arguments) in self._outside:
            self._outside.discard(id(arguments))
            return None
        return self._sandbox.confine()


async def _exited(proc: asyncio.subprocess.Process, readers: list[asyncio.Future[None]], limit: float) -> bool:
    """True once the shell has exited, False at the limit. Not `proc.wait()`: on Python 3.11 it
    also waits for the pipes to close, which a background job (`server &`) may never do."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while proc.returncode is None:
        left = deadline - loop.time()
        if left <= 0:
            return False
        pending = [r for r in readers if not r.done()]
        if pending:  # the usual end: output closes as the command exits
            await asyncio.wait(pending, timeout=min(left, 0.05))
        else:
            await asyncio.sleep(min(left, 0.005))
    return True


def _kill_when_started(spawn: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not spawn.cancelled() and spawn.exception() is None:
        _signal(spawn.result(), signal.SIGKILL)


async def _pump(stream: asyncio.StreamReader | None, into: _Capture) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        into.add(chunk)


def _signal(proc: asyncio.subprocess.Process, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)  # the command's own session: its pid is its group's id
    except (ProcessLookupError, PermissionError):
        pass


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM to the group, then SIGKILL for what is left after a short grace."""
    _signal(proc, signal.SIGTERM)
    await _exited(proc, [], _KILL_GRACE_S)
    _signal(proc, signal.SIGKILL)  # also children that outlived the shell
    await _exited(proc, [], _KILL_GRACE_S)


def _report(code: int | None, out: _Capture, err: _Capture, timed_out: float | None) -> str:
    head = f"timed out after {timed_out:g} s; the command was killed" if timed_out else f"exit code: {code}"
    parts = [head]
    if out.total:
        parts.append("stdout:\n" + out.text().rstrip("\n"))
    if err.total:
        parts.append("stderr:\n" + err.text().rstrip("\n"))
    if not out.total and not err.total:
        parts.append("(no output)")
    return "\n".join(parts)
