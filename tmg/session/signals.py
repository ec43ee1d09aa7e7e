"""Signals while a session ends: Ctrl-C (SIGINT) only hurries the end, never abandons it.

The session end spools the memory batch, writes the notice, closes the transcript and releases
the lock; Python's default SIGINT handler would raise KeyboardInterrupt anywhere inside it, and
asyncio's would cancel it. `ending_signals` routes SIGINT to `hurry` for the end's duration and
then puts back exactly the handler that was there before.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def ending_signals(loop: asyncio.AbstractEventLoop, hurry: Callable[[], None]) -> Iterator[None]:
    previous = signal.getsignal(signal.SIGINT)
    try:
        loop.add_signal_handler(signal.SIGINT, hurry)
    except (RuntimeError, ValueError):  # not the main thread: nothing to route
        yield
        return
    try:
        yield
    finally:
        restore_sigint(loop, previous)


def restore_sigint(loop: asyncio.AbstractEventLoop, previous: object) -> None:
    """Drop the loop's SIGINT handler and put back `previous` (asyncio would install Python's default)."""
    loop.remove_signal_handler(signal.SIGINT)
    if previous is not None:
        try:
            signal.signal(signal.SIGINT, previous)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
