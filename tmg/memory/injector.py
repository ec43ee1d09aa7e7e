"""Seam A, `MemoryInjector`: what memory gives each prompt (pipeline priority 15, memory.md §3).

- Two parts (`tmg.memory.framing`): the user's standing instructions (the pinned set) at the end
  of the system message, changed only when the set changes; notes recalled for the prompt go as a
  system message of their own right before the latest user turn, this request only, and only those
  the session's recent prompts were not sent (`SentNotes`), so that a model server re-reads little
  beyond the new turn. Neither part is stored; every earlier message stays byte-identical
  (servers' prefix caches stay warm).
- Origin decides the part: pinned engrams (tmg pins only the user's own standing instructions; a
  user may pin more with `tmg memory pin`) are instructions; every other note, answer-derived
  ones above all, is information that may be wrong, never an order.
- One deadline per prompt (`deadline`, 3 s by default): waiting for a server still starting,
  `plur_inject_hybrid`, the pinned set and the recall that resolves ids all share it, so a slow
  pinned read and a slow recall never add up. Hitting it is a failed recall for that prompt.
- The server is asked once per prompt (cached by prompt id and user text), not once per tool
  iteration; an empty user text is never sent.
- Words for every selected engram: `plur_inject_hybrid` leaves the constraints bucket (default
  type, procedural, "never ..." engrams, pinned ones included) out of its text and cuts `consider`
  lines to 60 characters, so those ids are resolved from a cache of statements seen, the pinned
  set and one `plur_recall` (a second scan of the store). Through the broker's read process the
  inject answers with every word (tmg/broker/plur_reader.mjs), and no recall is made. The pinned
  set is read beside the inject: through the broker every prompt (on PLUR's writer process, which
  sees every store PLUR was told of; a few ms), otherwise once a session.
- The budget is INJECT_BUDGET tokens for both parts, counted as characters / 4 (a rough ratio for
  English; good enough for a bound, and it needs no tokenizer); instructions first.
- Failure (raise, timeout, isError, bad result, the deadline): no notes this prompt; the
  instructions already known stay where they are (the system message does not flap). The
  session's first failed recall says so in one notice (stderr and the transcript); later ones are
  counted for `/memory` and shown with `--debug`. Never a write failure (memory.md §5).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, MutableMapping, MutableSet
from dataclasses import dataclass
from typing import Any, NamedTuple

from tmg.config.model import MemoryConfig
from tmg.context.pipeline import TurnContext
from tmg.memory.client import PlurClient
from tmg.memory.framing import (INSTRUCTIONS_HEADING, LEGACY_END, LEGACY_START, NOTES_HEADING, SHARED_HEADING, Note,
                                Rendered, one_line, render, render_instructions, without_blocks)
from tmg.memory.query import recall_query
from tmg.memory.results import InjectResult
from tmg.memory.team_store import team_prefix
from tmg.project import PROJECT_PREFIX, visible
from tmg.memory.runtime import ClientSource
from tmg.memory.sent_notes import SentNotes

# Kept for the code and tests that name them (the fenced block of earlier versions).
START_MARKER, END_MARKER = LEGACY_START, LEGACY_END
__all__ = ["INSTRUCTIONS_HEADING", "NOTES_HEADING", "SHARED_HEADING", "PROMPT_DEADLINE_S", "MemoryInjector", "Note", "without_blocks"]
CHARS_PER_TOKEN = 4
# All the memory work of one prompt: a server still starting (PLUR initializes in 0.4 to 0.9 s),
# inject, the pinned set and recall, together (memory.md §1: every call bounded, 3 s default).
PROMPT_DEADLINE_S = 3.0
READY_WAIT_S = PROMPT_DEADLINE_S  # the name the composition root reads TMG_RECALL_WAIT against
# The real server cuts `consider` lines to this many characters: such a line may not be whole.
_CONSIDER_CUT = 60
_PREVIEW_WORDS = 8
# The reason a failed-recall notice quotes is one line of at most this many characters.
_REASON_CHARS = 160


class _DeadlineHit(Exception):
    """The prompt's memory deadline passed (the message says in what)."""


class Recalled(NamedTuple):
    """What one ask produced: the notes in order, and the selected ids that have no words."""

    notes: tuple[Note, ...]
    unresolved: tuple[str, ...] = ()


class LastInjection(NamedTuple):
    """The last prompt's memory, for `/memory`."""

    prompt_id: int
    ids: tuple[str, ...]
    previews: tuple[str, ...]
    unresolved: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()  # selected and worded, but over the budget
    failed: str | None = None
    held: tuple[str, ...] = ()  # recalled notes not sent again: recent prompts carried them


@dataclass
class InjectorStats:
    asks: int = 0
    failures: int = 0
    not_ready: int = 0
    resolved_by_recall: int = 0
    unresolved: int = 0  # selected ids that reached no block in words (shown by /memory)
    deadline_hits: int = 0


class MemoryInjector:
    """The pipeline transformer that gives each prompt the user's instructions and recalled notes."""

    name = "memory"
    priority = 15

    def __init__(
        self,
        clients: ClientSource,
        *,
        statements: MutableMapping[str, str] | None = None,
        instructions: MutableSet[str] | None = None,
        deadline: float = PROMPT_DEADLINE_S,
        sent: SentNotes | None = None,
        debug: Callable[[str], None] = lambda _m: None,
        redact: Callable[[str], str] = lambda s: s,
        ready_wait: float | None = None,
        home_scope: str = "",
    ) -> None:
        """Args:
            clients: gives the PlurClient, or None while the server is not (yet) usable.
            statements: id -> full statement seen so far (shared with the learning hook).
            instructions: ids of the user's standing instructions (pinned; shared with the hook).
            deadline: seconds all of a prompt's memory work may take (`ready_wait` is its old name).
            sent: which notes went with the session's recent prompts (None: this process only).
            debug: lines for `--debug` (never shown otherwise).
            redact: masks config secrets in the recall query: the memory server never sees them.
            home_scope: the session's project scope (`project:<id>`): asked for when MEMORY.SCOPE
                is empty, and another project's engrams are left out (PLUR's scope only ranks).
        """
        self._clients = clients
        self.statements: MutableMapping[str, str] = {} if statements is None else statements
        self.instructions: MutableSet[str] = set() if instructions is None else instructions
        self._pinned: list[str] | None = None  # the pinned set's ids in the server's order, once read
        self._deadline = deadline if ready_wait is None else ready_wait
        self._sent = sent if sent is not None else SentNotes(None, "")
        self._debug = debug
        self._redact = redact
        self.home_scope = home_scope
        # The ids PLUR gives the engrams of this project's team file start so (team_store).
        self._team_ids = team_prefix(home_scope) if home_scope.startswith(PROJECT_PREFIX) else None
        self._scope = home_scope  # the scope asked for (MEMORY.SCOPE, else the project's), set each turn
        self.scopes: dict[str, str] = {}  # id -> scope, from the pinned set, recall and this session's learns
        self._key: tuple[int, str] | None = None
        self._recalled: Recalled | None = None  # None with a key: this prompt's ask failed
        self._fresh: list[Note] = []  # this prompt's notes the recent prompts were not sent
        self.last: LastInjection | None = None
        self.stats = InjectorStats()
        self._said_no_client = False
        self._said_recall_failed = False
        self.asking = False  # a prompt's ask is out (the one-shot imports its model backend meanwhile)
        # Run once on the loop when a prompt's ask is on the wire: the server works meanwhile (a
        # one-shot imports its model backend then, tmg.cli.oneshot). Cleared when run.
        self.while_asking: Callable[[], None] | None = None

    async def apply(self, ctx: TurnContext) -> None:
        memory = ctx.config.memory  # read every turn: ENABLED, INJECT_BUDGET and SCOPE are hot
        if not memory.enabled:
            return
        # The user's words, not the resources attached to them: what to remember is about the ask.
        text = self._redact(ctx.prompt_text or ctx.latest_user_text()).strip()
        if not text:
            return
        budget = memory.inject_budget * CHARS_PER_TOKEN
        self._scope = memory.scope or self.home_scope
        if (ctx.prompt_id, text) != self._key and not await self._ask_once(ctx, text, memory, budget):
            self._instruct(ctx, budget)  # no live server: what is known of the instructions still goes
            return
        instructions = self._instruct(ctx, budget)
        recalled = self._recalled
        if recalled is None:
            ctx.meta["memory_unavailable"] = "recall failed"
            if instructions is not None:
                ctx.meta["memory_ids"] = list(instructions.ids)
            return
        # Rendered every turn (INJECT_BUDGET is hot); which notes are new was decided once a prompt.
        rider = render(NOTES_HEADING, self._fresh, budget - (len(instructions.text) if instructions else 0))
        if rider is not None:
            ctx.ride_before_latest_user(rider.text)
        ids = (instructions.ids if instructions else ()) + (rider.ids if rider else ())
        ctx.meta["memory_ids"] = list(ids)
        if recalled.unresolved:
            ctx.meta["memory_unresolved"] = list(recalled.unresolved)
        words = {n.id: n.words for n in recalled.notes} | {n.id: n.words for n in self._instruction_notes()}
        left_out = (instructions.left_out if instructions else ()) + (rider.left_out if rider else ())
        held = tuple(n.id for n in recalled.notes if n not in self._fresh and n.id not in ids and not n.instruction)
        self.last = LastInjection(ctx.prompt_id, ids, tuple(_preview(words[i]) for i in ids), recalled.unresolved,
                                  left_out, held=held)

    async def _ask_once(self, ctx: TurnContext, text: str, memory: MemoryConfig, budget: int) -> bool:
        """This prompt's ask, within its deadline; False when there is no live server to ask."""
        deadline = asyncio.get_running_loop().time() + self._deadline
        client = await self._clients.client(self._deadline)
        if client is None:
            self._not_ready(ctx)
            return False
        self._key = (ctx.prompt_id, text)
        self._recalled = await self._ask(client, text, memory, ctx.prompt_id, deadline)
        if self._recalled is not None:
            self._fresh = self._new_notes(budget)
        elif self.last is not None and self.last.failed and not self._said_recall_failed:
            self._said_recall_failed = True  # once per session: not a line on every prompt
            ctx.notices.append(f"memory: recall failed ({_reason(self.last.failed)}); answering without it")
        return True

    def _not_ready(self, ctx: TurnContext) -> None:
        # Not started yet, or no server: nothing to ask; the next prompt may ask.
        self.stats.not_ready += 1
        ctx.meta["memory_unavailable"] = "not ready"  # the model is told (priority 110)
        if self._said_no_client:
            return
        self._said_no_client = True
        if self._clients.starting:  # slow, not broken: worth a word, once
            ctx.notices.append(f"memory: the memory server is still starting after {self._deadline:g} s; "
                               "this prompt goes without recall")
        else:  # a failed start was already reported by the runtime
            self._debug("memory: no live memory server for this turn; answering without recall")

    def _instruction_notes(self) -> list[Note]:
        """The standing instructions known now: the pinned set in its order, then those learned
        since it was read (the hook adds their ids and words as it learns them); another
        project's are left out."""
        order = list(self._pinned or ())
        order += sorted(i for i in self.instructions if i not in set(order))
        return [Note(i, self.statements[i], True, self._from_team(i)) for i in order
                if self.statements.get(i, "").strip() and visible(self.scopes.get(i), self._scope)]

    def _from_team(self, engram_id: str) -> bool:
        return self._team_ids is not None and engram_id.startswith(self._team_ids)

    def _instruct(self, ctx: TurnContext, budget: int) -> Rendered | None:
        """End the system message with the instructions (it is rebuilt each turn: never accumulated)."""
        rendered = render_instructions(self._instruction_notes(), budget)
        if rendered is None:
            return None
        if ctx.messages and ctx.messages[0].get("role") == "system":
            system = dict(ctx.messages[0])  # replaced, never mutated: it may be someone else's dict
            system["content"] = f"{system.get('content') or ''}\n\n{rendered.text}"
            ctx.messages[0] = system
        else:  # no persona before us (it always runs in tmg's pipeline): a system message of our own
            ctx.messages.insert(0, {"role": "system", "content": rendered.text})
        return rendered

    def _new_notes(self, budget: int) -> list[Note]:
        """This prompt's notes beside the user's turn: recalled, not instructions (the system
        message has those), and not sent with the session's recent prompts; recorded as sent."""
        assert self._recalled is not None
        instructions = render_instructions(self._instruction_notes(), budget)
        shown = set(instructions.ids) if instructions else set()
        candidates = [n for n in self._recalled.notes if n.id not in shown and not n.instruction]
        new = set(self._sent.new(n.id for n in candidates))
        fresh = [n for n in candidates if n.id in new]
        rider = render(NOTES_HEADING, fresh, budget - (len(instructions.text) if instructions else 0))
        self._sent.record(rider.ids if rider else ())
        return fresh

    async def _ask(self, client: PlurClient, text: str, memory: MemoryConfig, prompt_id: int,
                   deadline: float) -> Recalled | None:
        self.stats.asks += 1
        # The pinned set is asked for beside the inject, not after it: one round trip, not two.
        # Through the broker it is read every prompt (from its cache); else once a session.
        cached = bool(getattr(client.caller, "caches_reads", False))
        pins = asyncio.ensure_future(self._read_pins(client, deadline)) if cached or self._pinned is None else None
        inject = asyncio.ensure_future(client.inject(recall_query(text), memory.inject_budget, memory.scope or self.home_scope,
                                                     timeout=_left(deadline, client.timeout)))
        self.asking = True
        if self.while_asking is not None:
            work, self.while_asking = self.while_asking, None
            _once_on_the_wire(client.caller, 2 if pins else 1, work)
        try:
            await _until(deadline, "the memory server", inject, *([pins] if pins else []))
            result = inject.result()
            if not result.ok or result.value is None:
                return self._failed(prompt_id, result.error or result.failure or "no result")
            return await self._words(client, text, memory, result.value, deadline)
        except _DeadlineHit as hit:
            self.stats.deadline_hits += 1
            return self._failed(prompt_id, str(hit))
        finally:  # cancelled (Ctrl-C), or the deadline: what is still out goes too
            self.asking = False
            for task in (inject, pins):
                if task is not None and not task.done():
                    task.cancel()

    def _failed(self, prompt_id: int, reason: str) -> None:
        self.stats.failures += 1
        self.last = LastInjection(prompt_id, (), (), failed=reason)
        self._debug(f"memory: recall failed ({reason}); this prompt goes without it")
        return None

    async def _words(self, client: PlurClient, text: str, memory: MemoryConfig, inject: InjectResult,
                     deadline: float) -> Recalled:
        """Every selected engram in words: constraints first (the server fills them first too),
        then directives, then consider; ids the text leaves out or cuts come from the cache, the
        pinned set or recall."""
        directive_text = {line.id: line.text for line in inject.directives}
        consider_text = {line.id: line.text for line in inject.consider}
        for engram_id, words in directive_text.items():
            self.statements.setdefault(engram_id, words)
        wanted = [i for i in inject.ids_without_text if i not in self.statements]
        wanted += [i for i, words in consider_text.items()
                   if len(words) >= _CONSIDER_CUT and i not in self.statements]
        if wanted:
            limit = max(20, 4 * len(wanted))
            recall = asyncio.ensure_future(client.recall(recall_query(text), limit, memory.scope or self.home_scope, timeout=_left(deadline, client.timeout)))
            await _until(deadline, "the recall of their words", recall)
            result = recall.result()
            if result.ok and result.value is not None:
                for engram in result.value:
                    if engram.statement.strip():
                        self.statements[engram.id] = engram.statement
                    if engram.scope:
                        self.scopes[engram.id] = engram.scope
                self.stats.resolved_by_recall += sum(1 for i in wanted if i in self.statements)
        order = list(inject.ids_without_text)
        order += [line.id for line in inject.directives] + [line.id for line in inject.consider]
        notes, unresolved, seen = [], [], set()
        for engram_id in order:
            if engram_id in seen or not visible(self.scopes.get(engram_id), memory.scope or self.home_scope):
                continue  # another project's: PLUR's scope ranks, it does not keep out
            seen.add(engram_id)
            words = self.statements.get(engram_id) or directive_text.get(engram_id) or consider_text.get(engram_id)
            if words and words.strip():
                notes.append(Note(engram_id, one_line(words), engram_id in self.instructions,
                                  self._from_team(engram_id)))
            else:
                unresolved.append(engram_id)
        if unresolved:
            self.stats.unresolved += len(unresolved)
            self._debug(f"memory: no words found for {', '.join(unresolved)}; left out of the block")
        return Recalled(tuple(notes), tuple(unresolved))

    async def _read_pins(self, client: PlurClient, deadline: float) -> None:
        result = await client.pinned(timeout=_left(deadline, client.timeout))
        if not result.ok or result.value is None:
            self._debug(f"memory: the pinned set could not be read ({result.error})")
            return
        order = []
        for engram in result.value:
            self.instructions.add(engram.id)
            order.append(engram.id)
            if engram.statement.strip():
                self.statements[engram.id] = engram.statement
            if engram.scope:
                self.scopes[engram.id] = engram.scope
        self._pinned = order


def _left(deadline: float, bound: float) -> float:
    """What is left of the prompt's deadline, never more than the client's own bound for a call."""
    return max(0.01, min(bound, deadline - asyncio.get_running_loop().time()))


def _once_on_the_wire(caller: Any, calls: int, work: Callable[[], None], hops: int = 8) -> None:
    """Run `work` on the loop once `calls` requests are written (a broker's caller counts them;
    each goes out a few loop steps after its task starts), or after `hops` steps. Blocking the
    loop then costs the prompt nothing while the server takes longer than `work`: the answers
    wait in the socket."""
    loop = asyncio.get_running_loop()
    in_flight = getattr(caller, "in_flight", None)
    counted = callable(in_flight)

    def step(left: int) -> None:
        if left and counted and len(in_flight()) < calls:
            loop.call_soon(step, left - 1)
        else:
            work()

    loop.call_soon(step, hops)


async def _until(deadline: float, what: str, *tasks: Any) -> None:
    """Wait for `tasks` until `deadline`; _DeadlineHit when it passes first."""
    _done, pending = await asyncio.wait(tasks, timeout=max(0.0, deadline - asyncio.get_running_loop().time()))
    if pending:
        raise _DeadlineHit(f"no answer from {what} within the prompt's memory deadline")


def _reason(error: str) -> str:
    text = " ".join(error.split()) or "no reason given"
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1].rstrip() + "…"


def _preview(words: str) -> str:
    parts = words.split()
    return " ".join(parts[:_PREVIEW_WORDS]) + (" …" if len(parts) > _PREVIEW_WORDS else "")
