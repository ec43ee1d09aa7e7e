"""Memory's part of the single session end (memory.md §6), in its fixed order:

1. finish the detached writes (bounded), so their outcome is counted (one cut off counts as failed);
2. flush: spooled writes of earlier sessions first (batches, captures, learns; and the rings of
   sessions that died, left in their pending files), then this session's ring, as
   `plur_learn_batch ... max_llm_calls: 0`; never an empty batch; the ring is on disk before it
   is sent (write-ahead: its pending file, or the spool when that file is not whole) and leaves
   the disk once it lands; no wait for a server when
   there is nothing to send. A spooled write the server refuses as invalid is retried by later
   sessions at most `spool.MAX_TRIES` times, then quarantined and reported once with its file;
   it never blocks the writes behind it. Batch items the server refuses one by one (no isError)
   are counted as write failures and kept in the quarantine with the server's reasons;
3. read the write report, so the flush's own outcome is in it, and hand its notice (if any write
   failed) to the sink: stderr and the transcript;
4. the memory sync, when MEMORY.SYNC asks for one at the session end (`tmg.memory.sync_end`: the
   broker runs it once this process has gone);
5. close the memory server without waiting for it to exit by itself.
`steps()` gives these as `SessionEnd` steps; a failing step does not stop the next.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tmg.config.model import Config
from tmg.memory.health import WriteReport
from tmg.memory.client import CallResult
from tmg.memory.learning import RING_SIZE, LearningHook
from tmg.memory.lock import WriteLock
from tmg.memory.results import BatchResult
from tmg.memory.pending import orphans, pending_dir
from tmg.memory.runtime import ClientSource, MemoryRuntime
from tmg.memory.spool import MAX_TRIES, BatchSpool, SpoolEntry
from tmg.memory.surface import ADMIN_TOOL

# How long the end waits for detached writes (one call's bound, plus a little).
DRAIN_WAIT_S = 3.5
# How long the end waits for writes through the broker before it leaves them to it (PLUR 0.20.0
# takes most of a second for one at a year of use; a small store, a few ms).
HANDOFF_AFTER_S = 0.1
# How long the flush waits for a server still starting (a one-shot run may end quickly).
FLUSH_CLIENT_WAIT_S = 5.0
# Spooled batches replayed per session end, so a long outage's backlog cannot make one exit slow.
MAX_REPLAYS = 10
_TRANSPORT = ("timeout", "raised", "unavailable")
STILL_STARTING = "the memory server never finished starting — nothing was recalled or written"
# The steps a signal during the end may cut short (SessionEnd.hurry): what they have not sent
# is on disk by then (the flush spools the ring before its first wait).
DRAIN_STEP, FLUSH_STEP = "finish memory writes", "flush the memory batch"
HURRIABLE_STEPS = frozenset({DRAIN_STEP, FLUSH_STEP})


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
        sync: Any = None,
    ) -> None:
        self.session_id = session_id
        self._config = config
        self._clients = clients
        self._hook = hook
        self._spool = spool
        self._pending_root = pending_dir(spool.root)
        self.report = report
        self._runtime = runtime
        self._lock = lock
        self._warn = warn
        self._debug = debug
        self._drain_wait = drain_wait
        self._client_wait = client_wait
        self.last_flush: FlushOutcome | None = None
        self._sync = sync  # a tmg.memory.sync_end.EndSync, or None (no store to sync)

    def steps(self, notify: Callable[[str], None]) -> list[tuple[str, Callable[[], Awaitable[Any] | Any]]]:
        """The SessionEnd steps, in order. `notify` shows a line on stderr and in the transcript."""
        steps: list[tuple[str, Callable[[], Awaitable[Any] | Any]]] = [
            (DRAIN_STEP, self.drain),
            (FLUSH_STEP, self.flush),
            ("report memory write failures", lambda: self.notify(notify)),
        ]
        if self._sync is not None:
            steps.append(("sync memory", lambda: self._sync.run(notify)))
        if self._runtime is not None:
            steps.append(("close the memory server", self._runtime.close))
        return steps

    async def drain(self) -> None:
        handed = await self._hand_off()
        self.report.handed += sum(handed.values())  # they count as written (the session end syncs them)
        # Writes the broker took are not waited for: it lands them, and their files, after we go.
        wait = 0.0 if handed and sum(handed.values()) >= self._hook.pending else self._drain_wait
        late = await self._hook.drain(wait)
        for tool in late:
            if handed[tool] > 0:
                handed[tool] -= 1
                continue
            # cut off unfinished: a failed write, so the notice names its tool
            self.report.record(CallResult(tool=tool, ok=False, failure="timeout",
                                          error="still running at the session end; cancelled"))

    async def _hand_off(self) -> Counter[str]:
        """Leave the writes still in flight through the broker to it, each with its write-ahead
        file (found by its payload among this session's spooled writes); by tool, what it took."""
        if not self._hook.pending:
            return Counter()
        client = await self._clients.client(0)
        caller = getattr(client, "caller", None)
        in_flight = getattr(caller, "in_flight", None)
        if caller is None or in_flight is None:
            return Counter()
        # Most writes land in a few ms (a small store): those are waited for, as a direct
        # connection's are; what is still out after HANDOFF_AFTER_S goes to the broker.
        loop = asyncio.get_running_loop()
        until = loop.time() + HANDOFF_AFTER_S
        while self._hook.pending and loop.time() < until:
            await asyncio.sleep(0.005)
        if not self._hook.pending:
            return Counter()
        free = [e for e in self._spool.pending() if e.path in self._hook.spooled and e.write is not None]
        ahead: dict[int, str] = {}
        tools: dict[int, str] = {}
        for ident, name, arguments in in_flight():
            tool, payload = ((arguments.get("action"), arguments.get("args")) if name == ADMIN_TOOL
                             else (name, arguments))
            entry = next((e for e in free if f"plur_{e.kind}" == tool and e.write == payload), None)
            if entry is not None:
                free.remove(entry)
                ahead[ident], tools[ident] = str(entry.path), str(tool)
        taken = await caller.hand_off(ahead)
        if taken:
            self._debug(f"memory: {len(taken)} write(s) still in flight left to the broker, which lands them")
        return Counter(tools[i] for i in taken if i in tools)

    def notify(self, sink: Callable[[str], None]) -> str | None:
        """Read the report now (after the flush) and pass its notice on, if any write failed
        or the memory server was needed but never finished starting."""
        if self._clients.starting and self._hook.turns_seen and self._config().memory.enabled:
            self.report.start_failure = STILL_STARTING
        notice = self.report.notice()
        if notice is not None:
            sink(notice)
        return notice

    async def flush(self) -> FlushOutcome:
        """Replay the spool, then send this session's ring; what fails is spooled, never lost.

        Write-ahead: the ring is on disk before it is sent (its pending file, written turn by turn;
        spooled here only when that file is not whole), and leaves the disk once the send lands,
        so an end cut short anywhere leaves it for the next session. Rings left behind by
        sessions that died (their pending files) are spooled first.
        """
        outcome = FlushOutcome()
        self.last_flush = outcome
        items = self._hook.batch(self.session_id)
        memory = self._config().memory
        if not memory.enabled or memory.learn != "batch":
            # The tier at the end decides: a batch is written only by the batch tier.
            self._hook.take_batch(self.session_id)
            outcome.dropped = len(items)
            if items:
                self._debug(f"memory: LEARN is {memory.learn} at the session end; "
                            f"{len(items)} batch engram(s) not sent")
            items = []
            if not memory.enabled or memory.learn == "off":
                return outcome
        self._adopt_orphans()
        own: SpoolEntry | None = None
        if items and not self._hook.batch_is_durable(self.session_id):
            try:
                path = self._spool.put(items)
            except OSError as exc:
                self._debug(f"memory: the batch could not be spooled before sending ({exc})")
                path = None
            if path is not None:
                own = SpoolEntry(path, tuple(items))
                self._hook.take_batch(self.session_id)  # spooled: the ring and its file may go
            # else the ring's own file keeps it until it lands (or for a later session)
        if not items and not [e for e in self._spool.pending(len(self._hook.spooled) + 1)
                              if e.path not in self._hook.spooled]:
            return outcome  # nothing to send: do not wait for a server
        client = await self._clients.client(self._client_wait)
        if client is None:
            self._kept(items, own, outcome)
            return outcome
        if self._lock is None:
            await self._send(client, items, own, outcome)
        else:
            async with self._lock.held():
                await self._send(client, items, own, outcome)
        return outcome

    def _adopt_orphans(self) -> None:
        """Spool the rings of sessions that died before their end, then forget their files;
        clean the spool's temp files such a death left."""
        self._spool.sweep()
        for orphan in orphans(self._pending_root, RING_SIZE, warn=self._warn):
            try:
                if orphan.items:
                    self._spool.put(orphan.items)
                    self._debug(f"memory: {len(orphan.items)} engram(s) of a session that did not end spooled")
                orphan.remove()
            except OSError as exc:
                self._debug(f"memory: a pending ring could not be spooled ({exc}); left in place")
            finally:
                orphan.close()

    async def _send(self, client: Any, items: list[dict[str, Any]], own: SpoolEntry | None,
                    outcome: FlushOutcome) -> None:
        server_down = False
        mine = self._hook.spooled | ({own.path} if own is not None else set())
        earlier = [e for e in self._spool.pending(MAX_REPLAYS + len(mine) + 1) if e.path not in mine]
        for entry in earlier[:MAX_REPLAYS]:
            if not entry.engrams and entry.write is None:
                self._spool.remove(entry)  # nothing sendable in it: keeping it would retry forever
                continue
            result = await self._replay(client, entry)
            if result.ok:
                self._spool.remove(entry)
                outcome.replayed += 1
                self._refused_items(entry.engrams, result)
                continue
            if result.failure in _TRANSPORT:
                server_down = True  # a server that does not answer at all is not asked again now
                break
            # Refused as invalid: counted in its file; quarantined at the bound; the rest go on.
            moved = self._spool.refused(entry)
            if moved is not None:
                self._warn(f"memory: a spooled {entry.kind} was refused {MAX_TRIES} times ({result.error}); "
                           f"moved to {moved} and not retried")
        if not items:
            return
        if server_down:
            self._kept(items, own, outcome)
            return
        result = await client.learn_batch_items(items)
        if result.ok:
            if own is not None:
                self._spool.remove(own)
            else:
                self._hook.take_batch(self.session_id)
            outcome.sent = len(items)
            self._refused_items(items, result)
        else:
            self._kept(items, own, outcome)

    async def _replay(self, client: Any, entry: SpoolEntry) -> CallResult[Any]:
        write = entry.write or {}
        if entry.kind == "capture":
            return await client.capture(write["summary"], write.get("agent", "default"), write.get("session_id", ""))
        if entry.kind == "learn":
            result = await client.learn(write["statement"], write.get("tags") or [], write.get("scope") or "",
                                        pinned=write.get("pinned") is True, source=write.get("source"))
            if result.ok and result.value and write.get("pinned") is True:
                self._hook.instructions.add(result.value)
            return result
        return await client.learn_batch_items(entry.engrams)

    def _refused_items(self, items: Sequence[dict[str, Any]], result: CallResult[Any]) -> None:
        """Items a landed batch did not write (the report counts them): kept in the quarantine
        with the server's reasons and reported, never dropped without a word."""
        failures = result.value.failures if isinstance(result.value, BatchResult) else ()
        if not failures:
            return
        refused = []
        for failure in failures:
            index = failure.get("index")
            item = items[index] if isinstance(index, int) and 0 <= index < len(items) else {}
            refused.append({**item, "error": str(failure.get("error", ""))})
        try:
            path = self._spool.quarantine_items(refused)
        except OSError as exc:
            path = None
            self._debug(f"memory: refused batch items could not be kept ({exc})")
        reason = refused[0]["error"] or "no reason given"
        self._warn(f"memory: the server refused {len(refused)} batch item(s) ({reason})"
                   + (f"; kept in {path}" if path else ""))

    def _kept(self, items: list[dict[str, Any]], own: SpoolEntry | None, outcome: FlushOutcome) -> None:
        """The ring did not land: it stays where the write-ahead put it, or is spooled now."""
        if not items:
            return
        if own is not None:
            outcome.spooled = len(items)
            self._debug(f"memory: {len(items)} engram(s) spooled for the next session")
            return
        spooled = self._keep(items, outcome)
        # Spooled now; or, the spool failing, left in the ring's own file (still locked by this
        # process) for the next session to send once this one is gone.
        self._hook.take_batch(self.session_id, keep_on_disk=not spooled)

    def _keep(self, items: list[dict[str, Any]], outcome: FlushOutcome) -> bool:
        """Spool `items`; False when the spool could not be written."""
        if not items:
            return True
        try:
            self._spool.put(items)
        except OSError as exc:
            if self._hook.batch_is_durable(self.session_id):
                outcome.spooled = len(items)
                self._debug(f"memory: the spool failed ({exc}); {len(items)} engram(s) stay in the ring's file")
                return False
            outcome.lost = len(items)
            self._warn(f"memory: {len(items)} engram(s) could not be sent nor spooled ({exc}); they are lost")
            return False
        outcome.spooled = len(items)
        self._debug(f"memory: {len(items)} engram(s) spooled for the next session")
        return True
