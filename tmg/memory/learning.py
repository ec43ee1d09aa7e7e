"""Seam B, `LearningHook`: what each finished turn taught, written per the LEARN tier (memory.md §4).

Classification is by the hook's own `error` argument, never a stale field:
1. the turn has a response -> its text (non-thought text parts joined by newlines);
2. no response and an error -> an error episode `{error, prompt}`, unless the error is transient
   (rate limit, provider timeout after retries) or the user interrupted: those are skipped;
3. neither -> the last model message stored this turn; a tool-call-only turn has no text: skipped.

Tiers, read from the live config on every turn (LEARN is hot):
- `capture`: every episode -> `plur_capture`, detached;
- `batch`: learnable text (never error episodes) -> the session's ring of 20, sent at session end
  as engrams tagged `origin:answer` (shown as notes that may be wrong, never as instructions);
- `full` (the shipped default): the user's own corrections and standing instructions as pinned
  engrams (`plur_learn ... pinned: true`, `origin:user`; capped and deduped), which PLUR then
  injects for every prompt whatever its words; every episode as an episode (`plur_capture`),
  not an engram. Chosen on evidence (docs/memory-quality.md): a whole answer is not one
  assertion, and an answer stored as an engram grows the store every session (PLUR's inject
  slows with it) and comes back as "memory" even when it was wrong.
Writes are detached tasks (the next prompt never waits for them), tracked so the session end
can await them; learns take the advisory write lock. A capture or learn that fails is spooled
(`BatchSpool.put_write`) and replayed by a later session end. Every text passes the scrubber
(config redactor + secret shapes) before it is written anywhere.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import Callable, MutableMapping, MutableSet
from pathlib import Path
from typing import Any, NamedTuple

from tmg.config.model import Config
from tmg.engine.turn import Turn
from tmg.llm.gateway import ErrorKind, GatewayError
from tmg.memory import payloads
from tmg.memory.injector import without_blocks
from tmg.memory.lock import WriteLock
from tmg.memory.pending import PendingRing
from tmg.memory.runtime import ClientSource
from tmg.memory.scrub import make_scrubber
from tmg.memory.spool import BatchSpool

RING_SIZE = 20
# A write waits this long for a server that is still starting (it is detached: nobody waits on it).
CLIENT_WAIT_S = 15.0
_THOUGHT_TYPES = frozenset({"thinking", "reasoning", "redacted_thinking"})
_SENTENCE_START = r"(?:^|[.!?;\n]\s*)(?:please\s+)?"
_GATE = re.compile(
    r"\bplease\s+remember\b|\bfrom\s+now\s+on\b"
    + rf"|{_SENTENCE_START}(?:always|never|don['’]?t|do\s+not|stop)\b",
    re.IGNORECASE,
)
# A standing instruction is a sentence or a few, typed; a longer prompt is a task or a piped
# document, and a "stop" or "never" somewhere inside it must not pin the whole text to every
# later prompt (seen: a README chunk pinned as "the user's instruction", ~800 tokens a prompt).
MAX_INSTRUCTION_CHARS = 400


class Episode(NamedTuple):
    """What a turn taught: its text, or an error with the prompt that caused it."""

    text: str | None = None
    error: str | None = None
    prompt: str = ""

    @property
    def summary(self) -> str:
        """The capture summary: the text, or `error: <error> | user: <prompt>`; at most 2000 bytes."""
        if self.text is not None:
            return payloads.capture_summary(self.text)
        return payloads.capture_summary(error=self.error or "error", prompt=self.prompt)


def is_transient(error: BaseException) -> bool:
    """Rate limits and timeouts that outlived the retries: not worth remembering."""
    if isinstance(error, GatewayError):
        return error.kind in (ErrorKind.RATE_LIMIT, ErrorKind.TRANSIENT)
    return isinstance(error, TimeoutError)  # asyncio.TimeoutError is TimeoutError since 3.11


def content_text(content: Any) -> str:
    """A message's text: a string, or its non-thought text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("thought") or part.get("type") in _THOUGHT_TYPES:
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def classify(turn: Turn, error: BaseException | None) -> Episode | None:
    """The turn's episode, or None when it taught nothing worth writing."""
    completion = turn.completion
    if completion is not None and not completion.is_empty:
        text = completion.text
        return Episode(text=text) if text.strip() else None  # tool calls only: nothing to learn
    if error is not None:
        if isinstance(error, (asyncio.CancelledError, KeyboardInterrupt)) or is_transient(error):
            return None
        return Episode(error=str(error) or type(error).__name__, prompt=turn.user_text)
    for message in reversed(turn.stored):
        if message.get("role") == "assistant":
            text = content_text(message.get("content"))
            return Episode(text=text) if text.strip() else None
    return None


def is_instruction(text: str) -> bool:
    """A correction or standing instruction worth a learn of its own (`full` tier)."""
    return len(text) <= MAX_INSTRUCTION_CHARS and bool(_GATE.search(text))


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
        self._learned: dict[str, set[str]] = {}  # per session: casefolded statements sent to plur_learn
        self._tasks: set[asyncio.Task[None]] = set()
        self._spool = spool
        self._scrub = scrub if scrub is not None else make_scrubber(redact)
        self.spooled: set[Path] = set()  # spooled by this session: for the next one, not this one's end
        self.turns_seen = 0  # turns memory was asked to learn from (a server that never started matters then)
        self.instructions: MutableSet[str] = set() if instructions is None else instructions
        self._written = written

    async def after_turn(self, turn: Turn, error: BaseException | None) -> None:
        """Classify the turn and hand its episode to the live tier; never waits for a write."""
        config = self._config()
        memory = config.memory
        if not memory.enabled or memory.learn == "off":
            return
        self.turns_seen += 1
        self._scrub(turn.user_text)  # first: a password the user pasted is then masked in the answer too
        episode = classify(turn, error)
        if episode is not None and episode.text is not None:
            text = without_blocks(episode.text)
            episode = Episode(text=text) if text.strip() else None
        if memory.learn in ("capture", "full"):
            if episode is not None:
                self._capture(self._scrub(episode.summary), turn)
            if memory.learn == "full":
                self._maybe_learn(turn, memory.scope, memory.max_learns_per_session)
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

    def _maybe_learn(self, turn: Turn, scope: str, cap: int) -> None:
        statement = payloads.cut_utf8(self._scrub(turn.user_text).strip(), payloads.STATEMENT_MAX_BYTES)
        if not statement or not is_instruction(statement):
            return
        sent = self._learned.setdefault(turn.session_id, set())
        key = statement.casefold()
        if key in sent:
            return  # the same instruction again (or the same prompt's next tool iteration)
        if len(sent) >= cap:
            self._debug(f"memory: MAX_LEARNS_PER_SESSION ({cap}) reached; not learning {statement[:40]!r}")
            return
        sent.add(key)
        tags = payloads.session_tags(turn.session_id, turn.mode, payloads.USER_ORIGIN)
        self._learn(statement, tags, scope, turn.prompt_id)

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
        return len(self._learned.get(session_id, ()))

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
        self._learned.get(session_id, set()).discard(statement.casefold())

    def _capture(self, summary: str, turn: Turn) -> None:
        agent, session_id = turn.mode, turn.session_id
        payload = payloads.capture_payload(summary, agent, session_id)

        async def call(client: Any) -> Any:
            result = await client.capture(summary, agent, session_id)
            if result.ok and result.value is not None and self._written is not None:
                self._written(turn.prompt_id, "capture", result.value.id, summary)
            return result

        self._write("capture", payload, call)

    def _learn(self, statement: str, tags: list[str], scope: str, prompt_id: int) -> None:
        source = payloads.SOURCES[payloads.USER_ORIGIN]
        payload = payloads.learn_payload(statement, tags, scope, pinned=True, source=source)

        async def call(client: Any) -> Any:
            if self._lock is None:
                result = await client.learn(statement, tags, scope, pinned=True, source=source)
            else:
                async with self._lock.held():
                    result = await client.learn(statement, tags, scope, pinned=True, source=source)
            if result.ok and result.value:
                self.statements[result.value] = statement
                self.instructions.add(result.value)
                if self._written is not None:
                    self._written(prompt_id, "learn", result.value, statement)
            return result

        self._write("learn", payload, call)

    def _write(self, kind: str, payload: dict[str, Any], call: Callable[[Any], Any]) -> None:
        """Write-ahead: the payload is spooled now, before the turn goes on, and sent by a
        detached task that unspools it once it lands; a server that is down, a refusal, a
        cut-off end or a process killed right after the answer loses nothing (a later session
        end replays it; a duplicate is harmless)."""
        path = self._ahead(kind, payload)
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
