"""`SessionMemory`: one session's memory, assembled (runtime, injector, hook, report, spool, end).

The composition root builds one per session and wires three things: the injector into the
pipeline, the hook into the HookSet, and `end_steps(notify)` into the SessionEnd (before the
transcript closes). `/memory` prints `describe()`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tmg.config.model import Config
from tmg.mcp_servers.spec import ServerSpec
from tmg.memory.health import WriteReport
from tmg.memory.injector import READY_WAIT_S, MemoryInjector
from tmg.memory.learning import RING_SIZE, LearningHook
from tmg.memory.lock import WriteLock
from tmg.memory.pending import pending_dir
from tmg.memory.scrub import make_scrubber
from tmg.memory.runtime import ClientSource, MemoryRuntime, StartableCaller, _connect, memory_server_spec
from tmg.memory.sent_notes import SentNotes, sent_file
from tmg.memory.session_end import MemoryEnd
from tmg.memory.spool import BatchSpool, spool_dir


class SessionMemory:
    """Everything memory does for one session, built from the config at session open."""

    def __init__(
        self,
        config: Callable[[], Config],
        session_id: str,
        home: Path,
        *,
        warn: Callable[[str], None] = lambda _m: None,
        debug: Callable[[str], None] = lambda _m: None,
        errlog: Path | None = None,
        lock_path: Path | None = None,
        ready_wait: float = READY_WAIT_S,
        connect: Callable[[ServerSpec, float], StartableCaller] = _connect,
        runtime: MemoryRuntime | None = None,
        redact: Callable[[str], str] = lambda s: s,
    ) -> None:
        """Args:
            config: the live config (the seams read MEMORY from it every turn).
            session_id: this session's id (tags, the batch ring, the flush).
            home: TMG_HOME (the spool lives under it).
            warn: user-visible warnings (stderr): a server that cannot start, lost engrams.
            debug: `--debug` lines.
            errlog: where the memory server's stderr goes (None: discarded).
            lock_path: the advisory write lock (default `~/.plur/.tmg-write.lock`).
            ready_wait: the prompt's memory deadline (a server still starting, inject, the pinned
                set and recall together; TMG_RECALL_WAIT).
            runtime: the process's running memory server (`MemoryServers.runtime_for`), shared
                with other sessions and closed by its owner; None: this session starts its own
                and closes it at its end.
            redact: the config redactor (configured secrets); with the secret-shape detector it
                scrubs every text memory writes (server, spool, pending files), and masks the
                recall query.
        """
        current = config()
        self.session_id = session_id
        self._config = config
        self.report = WriteReport()
        self.statements: dict[str, str] = {}
        self.instructions: set[str] = set()  # ids of the user's standing instructions (pinned)
        scrub = make_scrubber(redact)
        owned = runtime is None
        if runtime is None:
            entry = current.mcp_servers.get(current.memory.server)
            runtime = MemoryRuntime(
                memory_server_spec(current, errlog),
                on_result=self.report.record,
                start_timeout=entry.timeout if entry else 15.0,
                warn=warn,
                debug=debug,
                connect=connect,
            )
            clients: ClientSource = runtime
        else:
            clients = runtime.for_session(self.report.record)
        self._clients = clients
        self.runtime = runtime
        self.lock = WriteLock(lock_path, debug=debug)
        self.injector = MemoryInjector(clients, statements=self.statements, instructions=self.instructions,
                                       deadline=ready_wait, sent=SentNotes(sent_file(home), session_id),
                                       debug=debug, redact=redact)
        self.spool = BatchSpool(spool_dir(home), warn=warn, scrub=scrub)
        self.hook = LearningHook(
            clients, config, lock=self.lock, statements=self.statements,
            client_wait=self.runtime.start_timeout, debug=debug, pending_root=pending_dir(spool_dir(home)),
            spool=self.spool, scrub=scrub, instructions=self.instructions,
        )
        self.end = MemoryEnd(
            session_id=session_id, config=config, clients=clients, hook=self.hook, spool=self.spool,
            report=self.report, runtime=self.runtime if owned else None, lock=self.lock, warn=warn, debug=debug,
        )

    def start(self) -> None:
        """Start the memory server in the background (idempotent); call on the session's event loop."""
        self.runtime.start()

    def end_steps(self, notify: Callable[[str], None]) -> list[tuple[str, Callable[[], Awaitable[Any] | Any]]]:
        """Memory's SessionEnd steps: finish writes, flush, notice (via `notify`), close."""
        return self.end.steps(notify)

    async def forget(self, engram_id: str) -> list[str]:
        """`/memory forget ID`: retire an engram through PLUR's plur_forget; the lines to show."""
        from tmg.memory.manage import forget_memory

        client = await self._clients.client(self.runtime.start_timeout)
        if client is None:
            return ["memory: no live memory server; nothing was forgotten"]
        outcome = await forget_memory(client, engram_id)
        if outcome.ok:
            self.statements.pop(engram_id.strip(), None)
            self.instructions.discard(engram_id.strip())
        return list(outcome.lines)

    def describe(self) -> list[str]:
        """The `/memory` lines: server, last injection, learning tier, write health."""
        memory = self._config().memory
        lines = [f"memory: {'on' if memory.enabled else 'off'} · {self.runtime.describe()}"]
        if self.runtime.spec is None:
            return lines  # nothing was or can be recalled or written in this session
        last = self.injector.last
        if last is None:
            lines.append("last injection: none yet")
        elif last.failed:
            lines.append(f"last injection (prompt {last.prompt_id}): failed — {last.failed}")
        else:
            lines.append(f"last injection (prompt {last.prompt_id}): {len(last.ids)} engram(s)")
            lines += [f"  {i}  {p}" for i, p in zip(last.ids, last.previews)]
            if last.unresolved:
                lines.append(f"  no words found for: {', '.join(last.unresolved)}")
        if self.injector.stats.unresolved:
            lines.append(f"unresolved ids (selected, no words found) this session: {self.injector.stats.unresolved}")
            if last.left_out:
                lines.append(f"  over the budget, left out: {', '.join(last.left_out)}")
        ring = len(self.hook.batch(self.session_id))
        learn = f"learning: {memory.learn}"
        if memory.learn == "batch":
            learn += f" · batch {ring}/{RING_SIZE} waiting for the session end"
        if memory.learn == "full":
            learn += f" · learned {self.hook.learned_count(self.session_id)}/{memory.max_learns_per_session}"
        lines.append(learn)
        stats = self.injector.stats
        if stats.not_ready:
            lines.append(f"recall skipped {stats.not_ready} time(s): the memory server was not ready")
        lines.append("write health (this session):")
        lines += [f"  {line}" for line in self.report.lines()]
        return lines
