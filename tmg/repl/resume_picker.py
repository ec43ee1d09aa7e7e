"""``tmg --resume`` without an id: the recent sessions of this project, numbered, and the one the user
picks by its number (Enter: the most recent; an empty list or anything else: the usual session)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Awaitable, Callable

from tmg.environment import Environment
from tmg.paths import tmg_home
from tmg.project import project_root
from tmg.session.options import ChatOptions
from tmg.session.store import SessionRef, SessionStore

SHOWN = 10  # sessions listed at most


def recent(store: SessionStore, mode: str, project: Path) -> list[SessionRef]:
    return store.of_project(mode, project)[:SHOWN]


def listing(refs: list[SessionRef], now: float | None = None) -> list[str]:
    """One line per session: number, id, how long ago it was active, size, first prompt."""
    now = time.time() if now is None else now
    lines = []
    for number, ref in enumerate(refs, 1):
        count, first = ref.outline()
        lines.append(f"  {number:>2}. {ref.id}  {_ago(now - ref.last_active())} · {count} msgs · {first or '(empty)'}")
    return lines


def _ago(seconds: float) -> str:
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


async def pick(refs: list[SessionRef], say: Callable[[str], None], ask: Callable[[], Awaitable[str]]) -> SessionRef | None:
    """The session the user picks (None: none listed, or none picked)."""
    if not refs:
        say("--resume: no earlier session in this project; starting as usual")
        return None
    say("sessions of this project, the most recent first:")
    for line in listing(refs):
        say(line)
    say("resume which? type its number and Enter (Enter alone: 1; anything else: the usual session)")
    answer = (await ask()).strip()
    if not answer:
        return refs[0]
    if answer.isdigit() and 1 <= int(answer) <= len(refs):
        return refs[int(answer) - 1]
    say("no session picked; starting as usual")
    return None


async def pick_id(envr: Environment, mode: str, say: Callable[[str], None], ask: Callable[[], Awaitable[str]]) -> str | None:
    """The id of the session of ``mode`` in this project the user picks, or None."""
    refs = recent(SessionStore(tmg_home(envr.env)), mode, project_root(envr.cwd))
    ref = await pick(refs, say, ask)
    return ref.id if ref is not None else None


async def pick_in(repl: Any, options: ChatOptions, mode: str) -> ChatOptions:
    """``options`` with the session the user picks in the REPL (``repl.picking`` while it asks: the
    prompt line says so)."""
    repl.picking = True
    try:
        picked = await pick_id(repl.envr, mode, repl.screen.hint, repl.reader().read)
    finally:
        repl.picking = False
    return replace(options, resume=picked)
