"""What a forwarded tools/call is, by its tool and arguments: a read, a write, or the pinned list.

- A read (a tool known to only read) goes to PLUR's read process, beside any write.
- The pinned list (`plur_pin {list: true}`) only reads too, but what it reads spans every store
  PLUR was told of (a trusted clone's team store, what a sync pulled), and the read process
  would answer it with the stores it started with (its PLUR reloads its config on an inject, not
  on the pinned list; tried and reverted, e2e/test_memory_team.py): it goes to the writer, which
  registered them, after the writes before it. But it changes nothing, so it neither drops the
  broker's read cache nor makes the read process re-parse the store (a write does both).
- Anything else writes.
A call detached at a session's end (its sync) runs after the writes queued on the store before it
(`after_writes`): the session's writes it left to the broker are in what it syncs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

# Tools known to only read; any other call to a store waits for the write before it (per store).
READS = ("plur_inject", "plur_recall", "plur_status", "plur_timeline", "plur_list", "plur_search",
         "plur_session_start", "plur_profile", "plur_packs_list", "plur_stores_list")
_GATEWAY = "plur_admin"  # the lean profile's way to every other tool: {"action": tool, "args": {...}}
log = logging.getLogger("tmg.broker")


def tool_name(params: dict[str, Any]) -> str:
    """The tool a tools/call runs: its name, or through PLUR's `plur_admin` gateway (the lean
    profile) the tool it names."""
    name = str(params.get("name", ""))
    arguments = params.get("arguments")
    if name == _GATEWAY and isinstance(arguments, dict):
        return str(arguments.get("action", ""))
    return name


def tool_arguments(params: dict[str, Any]) -> dict[str, Any]:
    """The arguments of the tool a tools/call runs (through the gateway: its `args`)."""
    arguments = params.get("arguments")
    if not isinstance(arguments, dict):
        return {}
    if str(params.get("name", "")) == _GATEWAY:
        inner = arguments.get("args")
        return inner if isinstance(inner, dict) else {}
    return arguments


def lists_pinned(params: dict[str, Any]) -> bool:
    """`plur_pin {list: true}`: the pinned set, read on the writer (see above)."""
    return tool_name(params) == "plur_pin" and tool_arguments(params).get("list") is True


def trace(server: str, how: str, params: dict[str, Any], began: float, locked: float) -> None:
    """One forwarded call's time, for the broker's log at --debug (where a prompt's wait goes)."""
    if log.isEnabledFor(logging.DEBUG):
        now = time.monotonic()
        log.debug("server %s: %s %s in %.1f ms (%.1f ms of it waiting for the store's write lock)", server,
                  how, tool_name(params), (now - began) * 1000, (locked - began) * 1000)


async def after_writes(lock: asyncio.Lock | None, bound: float) -> None:
    """Wait (at most `bound` s) until the writes queued on a store's write lock before now are
    done: a call detached at a session's end (its sync) runs after the writes the session left."""
    if lock is not None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(bound), lock:
                pass
