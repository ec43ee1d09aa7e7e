"""Guards for tests: a hang fails instead of hanging, and a state another process reaches is
polled for. Neither is a timing assertion: the behaviour asserted is the condition."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

GUARD_S = 20.0


async def finishes(aw: Awaitable[T], guard: float = GUARD_S) -> T:
    """Await `aw`; fail if it is still running after `guard` seconds.

    Unlike asyncio.wait_for, this cannot pass by accident: a coroutine that swallows the
    cancellation (as close() methods do) would make wait_for return normally after the timeout.
    """
    task = asyncio.ensure_future(aw)
    done, _ = await asyncio.wait({task}, timeout=guard)
    if not done:
        task.cancel()
        raise AssertionError(f"still running after the {guard:g} s hang guard")
    return task.result()


def eventually(condition: Callable[[], bool], guard: float = 10.0) -> bool:
    """Poll `condition` until it holds or `guard` seconds pass; return its last value.

    For a state another process reaches a moment after the call that caused it (a killed child
    being reaped). A behaviour that never happens still fails; only a slow machine is forgiven.
    """
    deadline = time.monotonic() + guard
    while not condition():
        if time.monotonic() > deadline:
            return condition()
        time.sleep(0.01)
    return True
