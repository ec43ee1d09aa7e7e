"""Running one hook command: ``/bin/sh -c COMMAND`` with its JSON input on stdin, bounded in time
(killed with its whole process group when it runs over) and in what it may print.

Hooks are the user's own commands (or a trusted project's): they run as the user, in the working
folder, with tmg's environment, outside the shell tool's sandbox, as git hooks and Claude Code's
hooks do.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Mapping, NamedTuple

MAX_OUTPUT_BYTES = 1 << 20  # of stdout and of stderr each; the rest is read and dropped


class CommandRun(NamedTuple):  # not a dataclass: cheaper to define on every one-shot's path
    """How a hook command ended: its exit code (None when it did not run to its end) and output."""

    code: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str = ""  # it could not be started


async def run_command(command: str, stdin: bytes, cwd: str, env: Mapping[str, str], timeout: float) -> CommandRun:
    """Run ``command`` to its end or for ``timeout`` seconds. Cancelling the caller kills it."""
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=cwd, env=dict(env), start_new_session=True)
    except OSError as exc:
        return CommandRun(error=f"it could not be started ({exc.strerror or exc})")
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        _, out, err, code = await asyncio.wait_for(
            asyncio.gather(_feed(proc.stdin, stdin), _drain(proc.stdout), _drain(proc.stderr), proc.wait()), timeout)
    except asyncio.TimeoutError:
        await _kill(proc)
        return CommandRun(timed_out=True)
    except BaseException:  # cancelled (Ctrl-C, the session ending): the hook goes with it
        await _kill(proc)
        raise
    return CommandRun(code, out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"))


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    try:
        pipe.write(data)
        await pipe.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # a hook that does not read its input (`exit 2`) is fine
    finally:
        try:
            pipe.close()
        except (BrokenPipeError, ConnectionResetError):
            pass


async def _drain(stream: asyncio.StreamReader) -> bytes:
    kept = bytearray()
    while chunk := await stream.read(1 << 16):
        if len(kept) < MAX_OUTPUT_BYTES:
            kept += chunk[: MAX_OUTPUT_BYTES - len(kept)]
    return bytes(kept)


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """The hook and whatever it started (its own session and process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        await asyncio.wait_for(proc.wait(), 5)
    except asyncio.TimeoutError:
        pass  # not reaped (a process in uninterruptible sleep): nothing more to do
