"""`SessionMemory`: one session's memory, assembled (runtime, injector, hook, report, spool, end).

The composition root builds one per session and wires three things: the injector into the
pipeline, the hook into the HookSet, and `end_steps(notify)` into the SessionEnd (before the
transcript closes). `/memory` prints `describe()` (what went with the last request, and why:
`tmg.memory.why`), `/memory forget N|ID` and `/memory add ...` act through `tmg.memory.manage`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tmg.config.model import Config
from tmg.mcp.spec import ServerSpec
from tmg.memory.health import WriteReport
from tmg.memory.injector import READY_WAIT_S, MemoryInjector
from tmg.memory.learning import RING_SIZE, LearningHook
from tmg.memory.lock import WriteLock
from tmg.memory.pending import pending_dir
from tmg.project import Project
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
        project: Project | None = None,
        session_dir: Path | None = None,
        trusted: Callable[[Path], bool] | None = None,
        written: Callable[[int, str, str, str], None] | None = None,
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
            project: the project the session runs in (what is taught about it stays in its
                scope, and another project's memories stay out of its requests).
            session_dir: the session's folder (its learn count is kept there).
            trusted: whether a folder is trusted (`tmg trust`): only a trusted project's team
                file (`.plur/engrams.yaml`, tmg.memory.team_store) is loaded; None: none is.
            written: told of each learn and capture that landed (the checkpoint log: a rewind
                retracts them).
        """
        current = config()
        self.session_id = session_id
        self._config = config
        self.report = WriteReport()
        self.statements: dict[str, str] = {}
        self.instructions: set[str] = set()  # ids of the user's standing instructions (pinned)
        self._scrub = scrub = make_scrubber(redact)
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
        self.team = None
        if project is not None and trusted is not None and runtime.spec is not None:
            from tmg.memory.team_store import Registering, point

            self.team = point(project, home, trusted)
            if self.team is not None:
                from tmg.memory.runtime import plur_store_path

                clients = Registering(clients, self.team, plur_store_path(runtime.spec.env), warn)
        self._clients = clients
        self.runtime = runtime
        self.lock = WriteLock(lock_path, debug=debug)
        self.injector = MemoryInjector(clients, statements=self.statements, instructions=self.instructions,
                                       deadline=ready_wait, sent=SentNotes(sent_file(home), session_id),
                                       debug=debug, redact=redact,
                                       home_scope=project.scope if project is not None else "")
        self.spool = BatchSpool(spool_dir(home), warn=warn, scrub=scrub)
        self.hook = LearningHook(
            clients, config, lock=self.lock, statements=self.statements,
            client_wait=self.runtime.start_timeout, debug=debug, pending_root=pending_dir(spool_dir(home)),
            spool=self.spool, scrub=scrub, instructions=self.instructions, project=project,
            session_dir=session_dir, warn=warn, written=written,
        )
        self.injector.scopes = self.hook.scopes  # what this session learns is filtered at once
        from tmg.memory.remember import RememberTool

        self.remember = RememberTool(self.hook, config, scrub, project)  # the model's way to keep a teaching
        self.end = MemoryEnd(
            session_id=session_id, config=config, clients=clients, hook=self.hook, spool=self.spool,
            report=self.report, runtime=self.runtime if owned else None, lock=self.lock, warn=warn, debug=debug,
            sync=self._end_sync(config, clients, home, debug),
        )

    def _end_sync(self, config: Callable[[], Config], clients: ClientSource, home: Path,
                  debug: Callable[[str], None]) -> Any:
        """The session end's sync step for the server's store (None: no server, nothing to sync)."""
        if self.runtime.spec is None:
            return None
        from tmg.memory.runtime import plur_store_path
        from tmg.memory.sync_end import EndSync

        return EndSync(config=config, clients=clients, report=self.report,
                       store=plur_store_path(self.runtime.spec.env), home=home, debug=debug)

    def start(self) -> None:
        """Start the memory server in the background (idempotent); call on the session's event loop."""
        self.runtime.start()

    def end_steps(self, notify: Callable[[str], None]) -> list[tuple[str, Callable[[], Awaitable[Any] | Any]]]:
        """Memory's SessionEnd steps: finish writes, flush, notice (via `notify`), close."""
        return self.end.steps(notify)

    async def forget(self, which: str) -> list[str]:
        """`/memory forget N|ID`: item N of the last request (see `describe`), or an engram or
        episode id; through `tmg.memory.manage.forget_memory`. The lines to show (the server's answer)."""
        from tmg.memory.manage import forget_memory
        from tmg.memory.why import items_of

        which = which.strip()
        if which.isdigit():
            items = items_of(self.injector.last, self.instructions, self.statements)
            if not 1 <= int(which) <= len(items):
                return [f"memory: no item {which} went with the last request ({len(items)} did; `/memory` lists them)"]
            which = items[int(which) - 1].id
        client = await self._clients.client(self.runtime.start_timeout)
        if client is None:
            return ["memory: no live memory server; nothing was forgotten"]
        outcome = await forget_memory(client, which)
        if outcome.ok:
            self.statements.pop(which, None)
            self.instructions.discard(which)
        return list(outcome.lines)

    async def retract(self, writes: list[dict[str, Any]], kept_ids: set[str]) -> list[str]:
        """A rewind's memory writes retracted (tmg.memory.retract); what was is forgotten here too."""
        from tmg.memory.retract import retract

        if not writes:
            return []
        client = await self._clients.client(self.runtime.start_timeout)
        lines = await retract(client, writes, kept_ids)
        for write in writes:
            if write.get("kind") == "learn" and write.get("id") not in kept_ids:
                self.instructions.discard(write["id"])
                self.statements.pop(write["id"], None)
                self.hook.forget_learned(self.session_id, str(write.get("text", "")))
        return lines

    async def add(self, text: str) -> list[str]:
        """`/memory add ...`: teach a standing instruction in the user's words (scrubbed, pinned)."""
        from tmg.memory.manage import add_memory
        from tmg.memory.payloads import USER_ORIGIN, session_tags

        client = await self._clients.client(self.runtime.start_timeout)
        if client is None:
            return ["memory: no live memory server; nothing was added"]
        config = self._config()
        tags = session_tags(self.session_id, config.mode, USER_ORIGIN)
        outcome, engram = await add_memory(client, text, scope=config.memory.scope, tags=tags,
                                           scrub=self._scrub, lock=self.lock)
        if engram is not None:  # the next prompt carries it under the instructions' heading
            self.instructions.add(engram.id)
            self.statements[engram.id] = engram.statement
        return list(outcome.lines)

    async def describe(self) -> list[str]:
        """The `/memory` lines: server, what went with the last request and why, learning tier,
        write health."""
        from tmg.memory.why import items_of, why_lines, with_server_facts

        memory = self._config().memory
        lines = [f"memory: {'on' if memory.enabled else 'off'} · {self.runtime.describe()}"]
        if self.runtime.spec is None:
            return lines  # nothing was or can be recalled or written in this session
        last = self.injector.last
        items = items_of(last, self.instructions, self.statements)
        if items:
            items = await with_server_facts(await self._clients.client(0.0), items)
        lines += why_lines(last, items)
        if self.injector.stats.unresolved:
            lines.append(f"unresolved ids (selected, no words found) this session: {self.injector.stats.unresolved}")
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
