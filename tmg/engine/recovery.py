"""Recovering: how long to wait before retrying a failed model call, and how often."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, bounded in count and per-wait length.

    A stall (a provider silent past FIRST_BYTE_TIMEOUT or STREAM_IDLE_TIMEOUT) costs a whole
    timeout per try, so it is retried ``stall_retries`` times only (within ``max_retries``):
    a provider that never answers fails after (1 + stall_retries) timeouts plus the backoff.

    ``TMG_RETRY_BASE_DELAY`` (seconds) shortens the waits; tests set it near zero.
    """

    max_retries: int = 4
    empty_retries: int = 2
    stall_retries: int = 1
    base_delay: float = 1.0
    max_delay: float = 30.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> "RetryPolicy":
        env = os.environ if env is None else env
        try:
            base = float(env.get("TMG_RETRY_BASE_DELAY", "1.0"))
        except ValueError:
            base = 1.0
        return cls(base_delay=max(0.0, base))

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        backoff = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        wait = backoff / 2 + random.uniform(0, backoff / 2)
        if retry_after is not None:
            # Honour the server's hint, scaled like everything else so tests stay fast.
            wait = max(wait, min(self.max_delay, retry_after * self.base_delay))
        return wait
