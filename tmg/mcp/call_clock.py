"""A tool call's bound, as every connection keeps it (McpConnection, and a WARM server's through the
broker): `timeout` seconds of silence, each progress notification buying another `timeout`, never
past `limit` seconds from the start; and no clock at all while the server waits for a person (a
form, a sampling consent, a login): the silence counts again from their answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class CallClock:
    def __init__(self, timeout: float, limit: float, asking: Callable[[], bool],
                 answered_at: Callable[[], float]) -> None:
        self.timeout = timeout
        self.limit = max(timeout, limit)
        self._asking = asking  # a person is being asked for the server now
        self._answered_at = answered_at  # when the last such question was answered (loop time)
        self._loop = asyncio.get_running_loop()
        self.started = self._loop.time()
        self._deadline = self.started + timeout

    def progressed(self) -> None:
        """A sign of life: another `timeout` seconds, within the limit."""
        self._deadline = min(self.started + self.limit, self._loop.time() + self.timeout)

    @property
    def at_limit(self) -> bool:
        return self._loop.time() >= self.started + self.limit

    async def wait(self, call: asyncio.Future[Any]) -> bool:
        """Wait for `call` within the bound; True when it finished, False when the bound ran out."""
        while not call.done():
            if self._asking():  # the server waits for the user, not the other way
                await asyncio.wait({call}, timeout=0.2)
                continue
            self._deadline = max(self._deadline, min(self.started + self.limit, self._answered_at() + self.timeout))
            if self._loop.time() >= self._deadline:
                return False
            await asyncio.wait({call}, timeout=self._deadline - self._loop.time())
        return True
