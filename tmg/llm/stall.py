"""Bounding a provider's silence: the wait for its first byte, then each gap between chunks.

A server that accepts the connection and never answers (a hung proxy, a model still loading)
would otherwise hold a prompt for the HTTP library's read timeout on every retry. One timer
watches the whole call: a piece of the stream only notes the time (no timer per chunk, so the
per-chunk CPU stays flat, quality.md P6); when the timer comes due it looks at the last piece
and either waits on (re-armed from it) or cancels the call, which leaves as a GatewayError.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

from tmg.llm.gateway import ErrorKind, GatewayError, ProviderSpec


class StallGuard:
    def __init__(self, provider: ProviderSpec, first_byte: float, idle: float) -> None:
        self.provider = provider
        self.first_byte = first_byte
        self.idle = idle
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._last = 0.0  # loop time of the request, then of the latest piece
        self._limit = first_byte
        self._started = False
        self._fired = False

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator["StallGuard"]:
        """Run the call inside; a stall leaves it as a classified GatewayError (``stalled``)."""
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self._last = self._loop.time()
        self._handle = self._loop.call_at(self._last + self._limit, self._due)
        try:
            yield self
        except asyncio.CancelledError:
            # Ours alone (not also the user's Ctrl-C): the stall, as an error.
            if self._fired and self._task is not None and self._task.uncancel() == 0:
                raise self.error() from None
            raise
        finally:
            self._handle.cancel()

    def tick(self) -> None:
        """Something arrived from the provider: the next piece has STREAM_IDLE_TIMEOUT to come."""
        self._last = self._loop.time()  # type: ignore[union-attr]
        if not self._started:  # the first byte: from now on the idle bound, which may be shorter
            self._started = True
            self._limit = self.idle
            if self._handle is not None and self.idle < self.first_byte:
                self._handle.cancel()
                self._handle = self._loop.call_at(self._last + self.idle, self._due)  # type: ignore[union-attr]

    def _due(self) -> None:
        now = self._loop.time()  # type: ignore[union-attr]
        due = self._last + self._limit
        if now - due > self._limit / 2:
            # The timer itself ran late: this process was busy (a slow import, a loaded
            # machine), not the provider silent. It gets a whole period from now.
            self._last = due = now
        if now < due:
            self._handle = self._loop.call_at(due, self._due)  # type: ignore[union-attr]
            return
        self._fired = True
        if self._task is not None:
            self._task.cancel()

    def error(self) -> GatewayError:
        name = self.provider.name
        if self._started:
            return GatewayError(ErrorKind.TRANSIENT, (
                f"provider '{name}' stalled mid-answer: nothing for {self.idle:g} s "
                f"(PROVIDERS.{name}.STREAM_IDLE_TIMEOUT)"), stalled=True)
        return GatewayError(ErrorKind.TRANSIENT, (
            f"provider '{name}' sent no response within {self.first_byte:g} s "
            f"(PROVIDERS.{name}.FIRST_BYTE_TIMEOUT); check that the server at "
            f"{self.provider.api_base or 'its default URL'} is up, or raise the timeout"), stalled=True)
