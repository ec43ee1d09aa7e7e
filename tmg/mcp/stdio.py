"""A stdio transport for the mcp SDK's ClientSession that closes in a moment.

The SDK's own `stdio_client` closes stdin and then waits up to 2 s for the server to exit, then
2 s more after SIGTERM. PLUR takes 2 to 3 s to exit on its own, so every tmg exit would pay that.
Here the wait after closing stdin is a short grace, then the process group gets SIGTERM and,
shortly after, SIGKILL. mcp itself is imported inside the functions, never at module level.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import IO, Any

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream

# How long the server may take to exit by itself once its stdin is closed, and after SIGTERM.
# Every call has been answered by then (the writes of PLUR are synchronous and atomic), so a
# server that does not exit at once is stopped: PLUR alone would take 2 to 3 s (P4).
EXIT_GRACE_S = 0.03
TERM_GRACE_S = 0.3


@asynccontextmanager
async def quick_stdio_transport(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    errlog: IO[Any] | int,
    umask: int | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn the server and yield the (read, write) stream pair a ClientSession expects
    (`umask`: the child's, e.g. a memory server's private store; None: tmg's own).

    The process is spawned before anything of the mcp SDK is imported: a server such as PLUR
    takes most of a second to initialize, and the SDK's import (about as long) overlaps it.

    Raises:
        OSError: the command could not be spawned (FileNotFoundError for a missing command).
    """
    process = await anyio.open_process(
        [command, *args],
        env=dict(env),
        cwd=cwd,
        stderr=errlog,
        start_new_session=True,  # own process group: Ctrl-C in tmg's terminal does not reach it
        umask=-1 if umask is None else umask,
    )
    # Items: SessionMessage | Exception one way, SessionMessage the other (untyped: no SDK import yet).
    read_writer, read_stream = anyio.create_memory_object_stream(0)
    write_stream, write_reader = anyio.create_memory_object_stream(0)

    async def pump_stdout() -> None:
        assert process.stdout is not None
        buffer = ""
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
            async with read_writer:
                async for chunk in TextReceiveStream(process.stdout, encoding="utf-8", errors="replace"):
                    lines = (buffer + chunk).split("\n")
                    buffer = lines.pop()
                    for line in lines:
                        if line.strip():
                            await read_writer.send(_parse_line(line))

    async def pump_stdin() -> None:
        assert process.stdin is not None
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode("utf-8"))

    async with anyio.create_task_group() as group:
        group.start_soon(pump_stdout)
        group.start_soon(pump_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()
            group.cancel_scope.cancel()


def _parse_line(line: str) -> Any:
    """One stdout line as a SessionMessage; a garbage line becomes an exception the session reports."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


async def _stop(process: Process) -> None:
    """Close stdin, give a short grace, then SIGTERM and SIGKILL the process group."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    if not await _exited_within(process, EXIT_GRACE_S):
        _signal_group(process.pid, signal.SIGTERM)
        if not await _exited_within(process, TERM_GRACE_S):
            _signal_group(process.pid, signal.SIGKILL)
            await _exited_within(process, TERM_GRACE_S)
    else:
        # The leader exited; anything it left in its group goes too.
        _signal_group(process.pid, signal.SIGKILL)
    if process.stdout is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(Exception):
            close()


async def _exited_within(process: Process, seconds: float) -> bool:
    """Poll returncode (not wait(): that also waits for pipe EOF, which children can hold)."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def open_errlog(path: str | None) -> IO[Any] | int:
    """Where the server's stderr goes: a file we append to (rotated past its size; created 0600:
    it lives under TMG_HOME and a server may log what it was sent), or the null device."""
    if path is None:
        return subprocess.DEVNULL
    from pathlib import Path

    from tmg.mcp.errlog import rotate
    from tmg.private_files import private_opener

    rotate(Path(path))
    return open(path, "ab", opener=private_opener)  # noqa: SIM115 - closed by the connection
