"""Bounding a provider's silence: the wait for its first byte, then each gap between chunks.

A server that accepts the connection and never answers (a hung proxy, a model still loading)
would otherwise hold a prompt for the HTTP library's read timeout on every retry. One asyncio
deadline covers the whole call: it starts at FIRST_BYTE_TIMEOUT and each piece of the stream
moves it to STREAM_IDLE_TIMEOUT from now (a cheap timer reschedule, no task per chunk).
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
        self._deadline: asyncio.Timeout | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = False

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator["StallGuard"]:
        """Run the call inside; a stall leaves it as a classified GatewayError (``stalled``)."""
        self._loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.first_byte) as deadline:
                self._deadline = deadline
                yield self
        except TimeoutError as exc:
            if self._deadline is None or not self._deadline.expired():
                raise  # not ours
            raise self.error() from exc

    def tick(self) -> None:
        """Something arrived from the provider: the next piece has STREAM_IDLE_TIMEOUT to come."""
        self._started = True
        if self._deadline is not None:
            self._deadline.reschedule(self._loop.time() + self.idle)  # type: ignore[union-attr]

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
