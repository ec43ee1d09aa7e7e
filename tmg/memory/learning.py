"""Seam B, `LearningHook`: what each finished turn taught, written per the LEARN tier (memory.md §4).

A turn's episode (its answer, or an error with its prompt) is `tmg.memory.turn_episode`'s.

Tiers, read from the live config on every turn (LEARN is hot):
- `capture`: every episode -> `plur_capture`, detached;
- `batch`: learnable text (never error episodes) -> the session's ring of 20, sent at session end
  as engrams tagged `origin:answer` (shown as notes that may be wrong, never as instructions);
- `full` (the shipped default): what the user taught, judged from what they typed (never piped
  text, files, tool or MCP results: `tmg.memory.teaching`), in their own words: standing
  instructions, preferences and facts they asked to keep as pinned engrams (`plur_learn ...
  pinned: true`, which PLUR injects for every prompt whatever its words), corrections of the
  previous answer as engrams recalled when their topic comes up; `origin:user`, in the
  project's scope when they are about the project; at most MAX_LEARNS_PER_SESSION per session
  across processes (`tmg.memory.ledger`), duplicates skipped. Answers are not written at all:
  a whole answer is not one assertion, an answer stored as an engram comes back as "memory"
  even when it was wrong, and an episode per answer grows a file PLUR rewrites whole on every
  capture, while nothing reads episodes back into a prompt (docs/memory-quality.md). The
  session's own record is tmg's history.
Writes are detached tasks (the next prompt never waits for them), tracked so the session end
can await them; learns take the advisory write lock. A capture or learn that fails is spooled
(`BatchSpool.put_write`) and replayed by a later session end. Every text passes the scrubber
(config redactor + secret shapes) before it is written anywhere.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, MutableMapping, MutableSet
from pathlib import Path
from typing import Any

from tmg.config.model import Config
from tmg.engine.turn import Turn
from tmg.memory import payloads
from tmg.memory.learn_result import Learned, parse_learned
from tmg.memory.injector import without_blocks
from tmg.memory.ledger import LearnLedger
from tmg.memory.lock import WriteLock
from tmg.memory.pending import PendingRing
from tmg.project import PROJECT_PREFIX, Project
from tmg.memory.runtime import ClientSource
from tmg.memory.scrub import make_scrubber
from tmg.memory.spool import BatchSpool
from tmg.memory.turn_episode import Episode, classify

RING_SIZE = 20
# A write waits this long for a server that is still starting (it is detached: nobody waits on it).
CLIENT_WAIT_S = 15.0


class LearningHook:
    """The after-turn hook. Register once per session in the engine's HookSet."""

    def __init__(
        self,
        clients: ClientSource,
        config: Callable[[], Config],
        *,
        lock: WriteLock | None = None,
        statements: MutableMapping[str, str] | None = None,
        ring_size: int = RING_SIZE,
        client_wait: float = CLIENT_WAIT_S,
        debug: Callable[[str], None] = lambda _m: None,
        pending_root: Path | None = None,
        spool: BatchSpool | None = None,
        redact: Callable[[str], str] = lambda s: s,
        scrub: Callable[[str], str] | None = None,
        instructions: MutableSet[str] | None = None,
        project: Project | None = None,
        session_dir: Path | None = None,
        warn: Callable[[str], None] | None = None,
        written: Callable[[int, str, str, str], None] | None = None,
    ) -> None:
        """Args:
            clients: gives the PlurClient, or None when memory has no live server.
            config: the live config (read on every turn: ENABLED, LEARN, SCOPE and the cap are hot).
            lock: the advisory write lock taken by learns (None: no lock, for tests).
            statements: id -> statement cache shared with the injector (learned ones are added).
            pending_root: where each session's ring is also written, item by item, so a crash
                loses nothing (`tmg.memory.pending`); None: the ring lives in memory only.
            spool: where a capture or learn that failed is kept for a later session (None: lost).
            redact: masks config secrets in what is learned: the store and the pending ring
                keep them no more than the history does.
            scrub: masks secrets in every text before it is written; by default the redactor
                followed by the secret-shape detector (`tmg.memory.scrub`).
            instructions: ids of the user's standing instructions (shared with the injector).
            project: where the session runs: what the user teaches about it goes to its scope.
            session_dir: the folder of the session this hook serves: its learn count is kept
                there, so the cap holds across processes (None: counted in this process).
            warn: a line the user sees (a teaching PLUR would not keep in the project's scope).
            written: told of each write that landed, `(prompt id, "learn" | "capture", id, text)`:
                the checkpoint log keeps them, so a rewind of that prompt can retract them.
        """
        self._clients = clients
        self._config = config
        self._lock = lock
        self.statements: MutableMapping[str, str] = {} if statements is None else statements
        self._ring_size = ring_size
        self._client_wait = client_wait
        self._debug = debug
        self._rings: dict[str, deque[dict[str, Any]]] = {}
        self._pending_root = pending_root
        self._pending: dict[str, PendingRing] = {}
        self._kept: list[PendingRing] = []  # rings left on disk at the end: locked until the process exits
        self._tasks: set[asyncio.Task[None]] = set()
        self._spool = spool
        self._scrub = scrub if scrub is not None else make_scrubber(redact)
        self.spooled: set[Path] = set()  # spooled by this session: for the next one, not this one's end
        self.turns_seen = 0  # turns memory was asked to learn from (a server that never started matters then)
        self.instructions: MutableSet[str] = set() if instructions is None else instructions
        self.scopes: dict[str, str] = {}  # id -> scope of what this session learned (the injector's filter)
        self._project = project
        self._session_dir = session_dir
        self._warn = warn or debug
        self._ledgers: dict[str, LearnLedger] = {}
        self._judged: tuple[str, int] | None = None  # (session, prompt) whose typed text was judged
        self._written = written
        self._kept_now: dict[int, list[str]] = {}  # this prompt's statements: one taught twice is kept once
        # Writes spooled before the answer (before_turn), sent when the turn is over.
        self._holding = False
        self._held: list[tuple[str, Path | None, Callable[[Any], Any]]] = []

    def before_turn(self, turn: Turn) -> None:
        """The full tier judges what the user typed before the model answers, and spools what it
        taught then: once the answer is in history its learning is on disk too, whenever the
        process is killed. It is sent after the turn (beside the answer, not the recall)."""
        memory = self._config().memory
        if memory.enabled and memory.learn == "full":
            self._holding = True
            self._learn_taught(turn, memory.scope, memory.max_learns_per_session)

    async def after_turn(self, turn: Turn, error: BaseException | None) -> None:
        """Classify the turn and hand its episode to the live tier; never waits for a write."""
        config = self._config()
        memory = config.memory
        held, self._held, self._holding = self._held, [], False
        for kind, path, call in held:  # spooled before the answer: sent now
            self._detach(self._send(kind, path, call), f"plur_{kind}")
        if not memory.enabled or memory.learn == "off":
            return
        self.turns_seen += 1
        if memory.learn == "full":  # what the user taught, not what the model answered
            self._learn_taught(turn, memory.scope, memory.max_learns_per_session)  # judged once a prompt
            return
        self._scrub(turn.user_text)  # first: a password the user pasted is then masked in the answer too
        episode = classify(turn, error)
        if episode is not None and episode.text is not None:
            text = without_blocks(episode.text)
            episode = Episode(text=text) if text.strip() else None
        if memory.learn == "capture":
            if episode is not None:
                self._capture(self._scrub(episode.summary), turn)
            return
        if episode is not None and episode.text is not None:
            tags = payloads.session_tags(turn.session_id, turn.mode, payloads.ANSWER_ORIGIN)
            self._append(turn.session_id, self._scrub(episode.text), tags, memory.scope)

    def _append(self, session_id: str, text: str, tags: list[str], scope: str) -> None:
        """Skip-at-append: blank text never enters; each item is cut to 2000 bytes here."""
        if not text.strip():
            return
        ring = self._rings.setdefault(session_id, deque(maxlen=self._ring_size))
        item = payloads.batch_item(text, tags, scope, payloads.SOURCES[payloads.ANSWER_ORIGIN])
        ring.append(item)
        if self._pending_root is not None:
            pending = self._pending.get(session_id)
            if pending is None:
                pending = self._pending[session_id] = PendingRing(
                    self._pending_root, session_id, self._ring_size, self._debug)
            pending.append(item, list(ring))

    def _learn_taught(self, turn: Turn, scope: str, cap: int) -> None:
        """Learn what the user typed for this prompt taught (once per prompt: a tool loop's later
        turns carry the same words)."""
        if self._judged == (turn.session_id, turn.prompt_id):
            return
        self._judged = (turn.session_id, turn.prompt_id)
        from tmg.memory.teaching import find_teachings

        project = self._project
        for teaching in find_teachings(turn.typed, without_blocks(turn.previous_answer),
                                       project.has_file if project is not None else lambda _name: False):
            statement = self._statement(teaching)
            if statement is None:
                continue
            where = scope or (project.scope if teaching.project and project is not None else "")
            if self.keep(statement, teaching.kind, teaching.standing, where, turn, cap) == "capped":
                return

    def keep(self, statement: str, kind: str, standing: bool, where: str, turn: Turn, cap: int) -> str:
        """Write one teaching in the user's words (the scorer's, or the `remember` tool's), counted
        against the session's cap: "learned", "known" (taught before in this session, maybe in
        an earlier one-shot) or "capped"."""
        ledger = self._ledger(turn.session_id)
        if statement in ledger or any(statement in k or k in statement for k in self._kept_now.get(turn.prompt_id, ())):
            return "known"
        if ledger.count >= cap:
            self._debug(f"memory: MAX_LEARNS_PER_SESSION ({cap}) reached; not learning {statement[:40]!r}")
            return "capped"
        tags = payloads.session_tags(turn.session_id, turn.mode, payloads.USER_ORIGIN) + [f"kind:{kind}"]
        self._debug(f"memory: learning the user's {kind}{' in ' + where if where else ''}: {statement[:60]!r}")
        self._learn(statement, tags, where, turn.prompt_id, pinned=standing)
        ledger.add(statement)  # after the write-ahead: a kill between the two loses nothing
        self._kept_now = {turn.prompt_id: [*self._kept_now.get(turn.prompt_id, ()), statement]}
        return "learned"

    def _statement(self, teaching: Any) -> str | None:
        """What is written for a teaching: the user's words (a correction with the sentence of the
        answer it corrects); None when anything in it looks like a secret (it is never pinned,
        masked or not)."""
        if self._scrub(teaching.statement) != teaching.statement:
            self._debug("memory: a teaching that holds a secret is not learned")
            return None
        statement = teaching.statement
        if teaching.context and self._scrub(teaching.context) == teaching.context:
            statement = f"{statement} (correcting the earlier answer: \"{teaching.context}\")"
        return payloads.cut_utf8(statement, payloads.STATEMENT_MAX_BYTES)

    def _ledger(self, session_id: str) -> LearnLedger:
        ledger = self._ledgers.get(session_id)
        if ledger is None:
            ledger = self._ledgers[session_id] = LearnLedger(self._session_dir, self._debug)
        return ledger

    def batch(self, session_id: str) -> list[dict[str, Any]]:
        """The session's ring, oldest first (a copy)."""
        return list(self._rings.get(session_id, ()))

    def take_batch(self, session_id: str, keep_on_disk: bool = False) -> list[dict[str, Any]]:
        """Empty the session's ring and return what it held (the session end's flush).

        Its file on disk goes too, unless `keep_on_disk` (the batch is neither landed nor
        spooled: the file is then what keeps it for a later session)."""
        ring = self._rings.pop(session_id, None)
        pending = self._pending.pop(session_id, None)
        if pending is not None:
            if keep_on_disk:
                self._kept.append(pending)
            else:
                pending.discard()
        return list(ring or ())

    def batch_is_durable(self, session_id: str) -> bool:
        """The whole ring is in its file on disk (a later session will replay it)."""
        pending = self._pending.get(session_id)
        return pending is not None and pending.durable

    def learned_count(self, session_id: str) -> int:
        return self._ledger(session_id).count

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def settled(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s, cancelling nothing) for the writes in flight to land: a
        rewind then finds them recorded against their prompt."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)

    async def drain(self, timeout: float) -> list[str]:
        """Wait for the detached writes, at most `timeout` seconds; cancel what is left.

        Returns the tool of each write cancelled unfinished (the caller counts them as failed)."""
        tasks = list(self._tasks)
        if not tasks:
            return []
        done, late = await asyncio.wait(tasks, timeout=timeout)
        for task in late:
            task.cancel()
        if late:
            self._debug(f"memory: {len(late)} write(s) still running at the session end were cancelled")
            await asyncio.wait(late, timeout=0.5)
        return sorted(task.get_name().partition(":")[2] or "memory write" for task in late)

    def _detach(self, coro: Any, tool: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=f"memory-write:{tool}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def forget_learned(self, session_id: str, statement: str) -> None:
        """A rewind retracted ``statement``: the same words taught again are learned again."""
        self._ledger(session_id).discard(statement)

    def _capture(self, summary: str, turn: Turn) -> None:
        agent, session_id = turn.mode, turn.session_id
        payload = payloads.capture_payload(summary, agent, session_id)

        async def call(client: Any) -> Any:
            result = await client.capture(summary, agent, session_id)
            if result.ok and result.value is not None and self._written is not None:
                self._written(turn.prompt_id, "capture", result.value.id, summary)
            return result

        self._write("capture", payload, call)

    def _learn(self, statement: str, tags: list[str], scope: str, prompt_id: int, pinned: bool = True) -> None:
        source = payloads.SOURCES[payloads.USER_ORIGIN]
        payload = payloads.learn_payload(statement, tags, scope, pinned=pinned, source=source)

        async def call(client: Any) -> Any:
            if self._lock is None:
                result = await client.call("plur_learn", payload, parse_learned)
            else:
                async with self._lock.held():
                    result = await client.call("plur_learn", payload, parse_learned)
            if not (result.ok and result.value):
                return result
            learned = result.value
            if scope.startswith(PROJECT_PREFIX) and learned.scope != scope:
                await self._held_back(client, learned, scope)
                return result
            self.statements[learned.id] = statement
            self.scopes[learned.id] = learned.scope or scope
            if pinned:
                self.instructions.add(learned.id)
            if self._written is not None:
                self._written(prompt_id, "learn", learned.id, statement)
            return result

        self._write("learn", payload, call)

    async def _held_back(self, client: Any, learned: Learned, scope: str) -> None:
        """PLUR keeps text it finds sensitive (an internal host, an address) out of shared scopes
        and stores it as personal instead, where every other project would see it: it is
        retired, and the user told."""
        await client.forget(learned.id, reason="tmg: held back from a project scope by PLUR")
        self._warn(f"memory: not learned for this project: PLUR keeps text naming {learned.why or 'sensitive material'} "
                   f"out of project scopes ({scope}); `tmg memory add` can keep it as a personal note")

    def _write(self, kind: str, payload: dict[str, Any], call: Callable[[Any], Any]) -> None:
        """Write-ahead: the payload is spooled now, before the turn goes on, and sent by a
        detached task that unspools it once it lands; a server that is down, a refusal, a
        cut-off end or a process killed right after the answer loses nothing (a later session
        end replays it; a duplicate is harmless)."""
        path = self._ahead(kind, payload)
        if self._holding:
            self._held.append((kind, path, call))
        else:
            self._detach(self._send(kind, path, call), f"plur_{kind}")

    async def _send(self, kind: str, path: Path | None, call: Callable[[Any], Any]) -> None:
        client = await self._clients.client(self._client_wait)
        if client is None:
            self._debug(f"memory: no live memory server; a {kind} waits in the spool for a later session")
            return
        result = await call(client)  # counted by the write report
        if result.ok:
            if path is not None and self._spool is not None:
                self._spool.remove_path(path)
                self.spooled.discard(path)
        else:
            self._debug(f"memory: a {kind} did not land ({result.error})"
                        + ("; it waits in the spool for a later session" if path else "; it is lost"))

    def _ahead(self, kind: str, payload: dict[str, Any]) -> Path | None:
        if self._spool is None:
            return None
        try:
            path = self._spool.put_write(kind, payload)
        except OSError as exc:
            self._debug(f"memory: a {kind} could not be spooled before sending ({exc})")
            return None
        if path is not None:
            self.spooled.add(path)
        return path
