"""Memory's part of the single session end (memory.md §6), in its fixed order:

1. finish the detached writes (bounded), so their outcome is counted;
2. flush the batch: spooled batches of earlier sessions first, then this session's ring, as
   `plur_learn_batch ... max_llm_calls: 0`; never an empty batch; a batch that fails is spooled;
3. read the write report, so the flush's own outcome is in it, and hand its notice (if any write
   failed) to the sink: stderr and the transcript;
4. close the memory server without waiting for it to exit by itself.
`steps()` gives these as `SessionEnd` steps; a failing step does not stop the next.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tmg.config.model import Config
from tmg.memory.health import WriteReport
from tmg.memory.learning import LearningHook
from tmg.memory.lock import WriteLock
from tmg.memory.runtime import ClientSource, MemoryRuntime
from tmg.memory.spool import BatchSpool

# How long the end waits for detached writes (one call's bound, plus a little).
DRAIN_WAIT_S = 3.5
# How long the flush waits for a server still starting (a one-shot run may end quickly).
FLUSH_CLIENT_WAIT_S = 5.0
# Spooled batches replayed per session end, so a long outage's backlog cannot make one exit slow.
MAX_REPLAYS = 10


@dataclass
class FlushOutcome:
    """What one flush did, for tests and `/memory`."""

    replayed: int = 0  # spooled batches that landed (and were removed)
    sent: int = 0  # engrams of this session's ring that landed
    spooled: int = 0  # engrams of this session's ring kept on disk for the next session
    lost: int = 0  # engrams neither landed nor spooled (the spool could not be written)
    dropped: int = 0  # ring engrams not sent because memory or learning was off at the end


class MemoryEnd:
    """Flush, report, notice, close: memory's steps of the session end."""

    def __init__(
        self,
        *,
        session_id: str,
        config: Callable[[], Config],
        clients: ClientSource,
        hook: LearningHook,
        spool: BatchSpool,
        report: WriteReport,
        runtime: MemoryRuntime | None = None,
        lock: WriteLock | None = None,
        warn: Callable[[str], None] = lambda _m: None,
        debug: Callable[[str], None] = lambda _m: None,
        drain_wait: float = DRAIN_WAIT_S,
        client_wait: float = FLUSH_CLIENT_WAIT_S,
    ) -> None:
        self.session_id = session_id
        self._config = config
        self._clients = clients
        self._hook = hook
        self._spool = spool
        self.report = report
        self._runtime = runtime
        self._lock = lock
        self._warn = warn
        self._debug = debug
        self._drain_wait = drain_wait
        self._client_wait = client_wait
        self.last_flush: FlushOutcome | None = None

    def steps(self, notify: Callable[[str], None]) -> list[tuple[str, Callable[[], Awaitable[Any] | Any]]]:
        """The SessionEnd steps, in order. `notify` shows a line on stderr and in the transcript."""
        steps: list[tuple[str, Callable[[], Awaitable[Any] | Any]]] = [
            ("finish memory writes", self.drain),
            ("flush the memory batch", self.flush),
            ("report memory write failures", lambda: self.notify(notify)),
        ]
        if self._runtime is not None:
            steps.append(("close the memory server", self._runtime.close))
        return steps

    async def drain(self) -> None:
        await self._hook.drain(self._drain_wait)

    def notify(self, sink: Callable[[str], None]) -> str | None:
        """Read the report now (after the flush) and pass its notice on, if any write failed."""
        notice = self.report.notice()
        if notice is not None:
            sink(notice)
        return notice

    async def flush(self) -> FlushOutcome:
        """Replay the spool, then send this session's ring; what fails is spooled, never lost."""
        outcome = FlushOutcome()
        self.last_flush = outcome
        items = self._hook.take_batch(self.session_id)
        memory = self._config().memory
        if not memory.enabled or memory.learn not in ("batch", "full"):
            # The tier at the end decides: learning switched off means this batch is not written.
            outcome.dropped = len(items)
            if items:
                self._debug(f"memory: learning is off at the session end; {len(items)} batch engram(s) not sent")
            return outcome
        client = await self._clients.client(self._client_wait)
        if client is None:
            self._keep(items, outcome)
            return outcome
        if self._lock is None:
            await self._send(client, items, outcome)
        else:
            async with self._lock.held():
                await self._send(client, items, outcome)
        return outcome

    async def _send(self, client: Any, items: list[dict[str, Any]], outcome: FlushOutcome) -> None:
        server_down = False
        for entry in self._spool.pending(MAX_REPLAYS):
            if not entry.engrams:
                self._spool.remove(entry)  # nothing sendable in it: keeping it would retry forever
                continue
            result = await client.learn_batch_items(entry.engrams)
            if not result.ok:
                # Stop replaying; a server that does not answer at all is not asked again now.
                server_down = result.failure in ("timeout", "raised", "unavailable")
                break
            self._spool.remove(entry)
            outcome.replayed += 1
        if not items:
            return
        if server_down:
            self._keep(items, outcome)
            return
        result = await client.learn_batch_items(items)
        if result.ok:
            outcome.sent = len(items)
            failures = result.value.failures if result.value else ()
            if failures:
                self._debug(f"memory: the server refused {len(failures)} batch item(s): {failures[:3]}")
        else:
            self._keep(items, outcome)

    def _keep(self, items: list[dict[str, Any]], outcome: FlushOutcome) -> None:
        if not items:
            return
        try:
            self._spool.put(items)
        except OSError as exc:
            outcome.lost = len(items)
            self._warn(f"memory: {len(items)} engram(s) could not be sent nor spooled ({exc}); they are lost")
            return
        outcome.spooled = len(items)
        self._debug(f"memory: {len(items)} engram(s) spooled for the next session")
