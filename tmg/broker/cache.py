"""`ReadCache`: the broker's answers to reads a client marked cacheable (memory's pinned set).

A prompt needs the user's standing instructions every time, and asking PLUR for them costs a
read of its whole store once anything changed it (PLUR 0.20.0 rewrites `engrams.yaml` on every
inject and recall). The broker sees every write tmg makes to a store, so it can answer the same
read from memory until one happens:
- a hit is answered at once; when the entry is older than `refresh_after` it is also fetched
  again in the background (one fetch per entry at a time), so what another program changed in the
  store reaches the next prompt, and nobody waits for it;
- a write to the store (any call that is not a read) drops the store's entries, and a fetch that
  overlapped a write is not kept: each store has a generation, bumped when a write starts and
  when it ends, and an entry is good only for the generation it was fetched in;
- error results are never kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

REFRESH_AFTER_S = 2.0

Fetch = Callable[[], Awaitable[dict[str, Any]]]


class _Entry(NamedTuple):
    result: dict[str, Any]
    generation: int
    at: float


class ReadCache:
    def __init__(self, refresh_after: float = REFRESH_AFTER_S) -> None:
        self.refresh_after = refresh_after
        self._entries: dict[tuple[Any, str], _Entry] = {}
        self._generations: dict[str, int] = {}
        self._refreshing: dict[tuple[Any, str], asyncio.Task[None]] = {}
        self.hits = 0
        self.misses = 0

    def generation(self, store: str) -> int:
        return self._generations.get(store, 0)

    def written(self, store: str) -> None:
        """A write to `store` starts or ends: what was read before it is not its state any more."""
        self._generations[store] = self.generation(store) + 1
        for key in [k for k in self._entries if k[0][0] == store]:
            del self._entries[key]

    async def read(self, owner: tuple[str, Any], params: dict[str, Any], fetch: Fetch) -> dict[str, Any]:
        """The result of `params` for `owner` (the store and the server that answers for it):
        from the cache when it holds one of this generation, else fetched (and kept)."""
        key = (owner, json.dumps(params, sort_keys=True))
        entry = self._entries.get(key)
        if entry is not None and entry.generation == self.generation(owner[0]):
            self.hits += 1
            if time.monotonic() - entry.at > self.refresh_after and key not in self._refreshing:
                task = asyncio.create_task(self._refresh(key, owner[0], fetch))
                self._refreshing[key] = task
                task.add_done_callback(lambda _t, k=key: self._refreshing.pop(k, None))
            return entry.result
        self.misses += 1
        return await self._fetch(key, owner[0], fetch)

    async def _refresh(self, key: tuple[Any, str], store: str, fetch: Fetch) -> None:
        with contextlib.suppress(Exception):  # a failed refresh keeps the entry; the next hit tries again
            await self._fetch(key, store, fetch)

    async def _fetch(self, key: tuple[Any, str], store: str, fetch: Fetch) -> dict[str, Any]:
        generation = self.generation(store)
        result = await fetch()
        if not result.get("isError") and self.generation(store) == generation:
            self._entries[key] = _Entry(result, generation, time.monotonic())
        return result

    async def aclose(self) -> None:
        for task in list(self._refreshing.values()):
            task.cancel()
        for task in list(self._refreshing.values()):
            with contextlib.suppress(BaseException):
                await task
