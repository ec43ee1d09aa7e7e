"""Looking after what memory holds (`tmg memory ...`, `/memory ...`): list the standing
instructions and the latest episodes, search both, forget either, pin and unpin, and teach an
instruction directly (`add`).

Engrams go through PLUR's own tools (plur_pin, plur_recall, plur_forget, plur_learn). Episodes
are listed and searched with plur_timeline; PLUR 0.20.0 has no tool that deletes one, so
forgetting an episode removes it from PLUR's episodes file under PLUR's own lock
(`tmg.memory.episodes`). Each operation returns the lines to show and whether it worked; a
failure is one line saying what happened, with the server's own reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tmg.memory import payloads
from tmg.memory.client import PlurClient
from tmg.memory.lock import WriteLock
from tmg.memory.results import Engram, Episode

SEARCH_LIMIT = 20
LATEST_EPISODES = 10
EPISODE_DAYS = 30  # `list` asks for the last month's episodes, not a year of them
_STATEMENT_CHARS = 160
EPISODE_PREFIX = "EP-"


@dataclass(frozen=True)
class Outcome:
    lines: tuple[str, ...]
    ok: bool = True


def _words(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _STATEMENT_CHARS else text[: _STATEMENT_CHARS - 1].rstrip() + "…"


def _line(engram_id: str, statement: str, scope: str | None = None) -> str:
    return f"{engram_id}  {f'[{scope}]  ' if scope else ''}{_words(statement)}"


def _episode_line(episode: Episode) -> str:
    when = (episode.timestamp or "")[:16].replace("T", " ")
    return f"{episode.id}  {when + '  ' if when else ''}{_words(episode.summary)}"


def _newest_first(episodes: Sequence[Episode]) -> list[Episode]:
    return sorted(episodes, key=lambda e: e.timestamp or "", reverse=True)


async def list_memory(client: PlurClient, shared_from: Callable[[Engram], Path | None] = lambda _e: None) -> Outcome:
    """The pinned set (the standing instructions injected for every prompt) with each one's
    scope, and for those shared with a team the repository file they come from (`shared_from`),
    the latest episodes, and the store's size."""
    pinned = await client.pinned()
    if not pinned.ok or pinned.value is None:
        return Outcome((f"memory: could not list the pinned engrams ({pinned.error})",), False)
    lines = [f"standing instructions (pinned, injected for every prompt): {len(pinned.value)}"]
    for e in pinned.value:
        source = shared_from(e)
        where = f"{e.scope} · shared, from {source}" if source is not None else e.scope
        lines.append(f"  {_line(e.id, e.statement, where)}")
    since = (datetime.now(timezone.utc) - timedelta(days=EPISODE_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")
    recent = await client.timeline(since=since)
    if recent.ok and recent.value is not None:
        latest = _newest_first(recent.value)[:LATEST_EPISODES]
        lines.append(f"episodes (what happened in sessions; searched, never injected): {len(recent.value)} "
                     f"in the last {EPISODE_DAYS} days" + (f", the latest {len(latest)}:" if latest else ""))
        lines += [f"  {_episode_line(e)}" for e in latest]
    else:
        lines.append(f"episodes: could not be listed ({recent.error})")
    status = await client.status()
    if status.ok and status.value is not None:
        lines.append(f"store: {status.value.engram_count} engram(s), {status.value.episode_count} episode(s); "
                     "`tmg memory search WORDS` finds the others")
    return Outcome(tuple(lines))


async def search_memory(client: PlurClient, query: str, scope: str = "") -> Outcome:
    """Engrams (plur_recall, ranked) and episodes holding every word (plur_timeline), with ids."""
    query = query.strip()
    if not query:
        return Outcome(("memory: search needs some words",), False)
    found, episodes = await asyncio.gather(client.recall(query, SEARCH_LIMIT, scope), client.timeline(search=query))
    if not found.ok or found.value is None:
        return Outcome((f"memory: search failed ({found.error})",), False)
    lines = [_line(e.id, e.statement, e.scope) for e in found.value]
    if episodes.ok and episodes.value is not None:
        # plur_timeline matches ANY of the words; a search means all of them.
        terms = query.casefold().split()
        hits = [e for e in episodes.value if all(t in e.summary.casefold() for t in terms)]
        lines += [_episode_line(e) for e in _newest_first(hits)[:SEARCH_LIMIT]]
    else:
        lines.append(f"episodes: could not be searched ({episodes.error})")
    return Outcome(tuple(lines) if lines else (f"no memory matches {query!r}",))


async def forget_memory(client: PlurClient, memory_id: str) -> Outcome:
    """Retire an engram (plur_forget: PLUR keeps its history) or remove an episode."""
    memory_id = memory_id.strip()
    if not memory_id:
        return Outcome(("memory: forget needs an id (see `tmg memory list` or `search`)",), False)
    if memory_id.startswith(EPISODE_PREFIX):
        return await forget_episode_by_id(client, memory_id)
    done = await client.forget(memory_id, reason="forgotten by the user with tmg")
    if not done.ok or done.value is None:
        return Outcome((f"memory: could not forget {memory_id} ({_why(done.error)})",), False)
    return Outcome((f"forgotten: {_line(done.value.id, done.value.statement)}",))


async def forget_episode_by_id(client: PlurClient, episode_id: str) -> Outcome:
    from tmg.memory.episodes import EpisodeError, forget_episode

    status = await client.status()
    root = status.value.raw.get("storage_root") if status.ok and status.value is not None else None
    if not isinstance(root, str) or not root:
        return Outcome((f"memory: could not forget {episode_id} (the server did not say where its store is: "
                        f"{status.error or 'no storage_root'})",), False)
    try:
        summary = await asyncio.to_thread(forget_episode, Path(root), episode_id)
    except (EpisodeError, OSError) as exc:
        return Outcome((f"memory: could not forget {episode_id} ({exc})",), False)
    return Outcome((f"forgotten: {episode_id}  {_words(summary)}",
                    f"(removed from {Path(root) / 'episodes.yaml'} under PLUR's own lock: PLUR 0.20.0 has no tool "
                    "that forgets an episode)"))


async def add_memory(client: PlurClient, text: str, *, scope: str = "", tags: Sequence[str] = (),
                     scrub: Callable[[str], str] = lambda s: s,
                     lock: WriteLock | None = None) -> tuple[Outcome, Engram | None]:
    """Teach a standing instruction directly: the user's words (scrubbed), pinned, origin user,
    in `scope` (empty: the server's default, personal). Returns what to show and the engram."""
    said = text.strip()
    if not said:
        return Outcome(("memory: add needs the words to remember",), False), None
    statement = payloads.cut_utf8(scrub(said), payloads.STATEMENT_MAX_BYTES)
    tags = list(dict.fromkeys([*tags, f"origin:{payloads.USER_ORIGIN}"]))
    source = payloads.SOURCES[payloads.USER_ORIGIN]
    if lock is None:
        done = await client.learn(statement, tags, scope, pinned=True, source=source)
    else:
        async with lock.held():
            done = await client.learn(statement, tags, scope, pinned=True, source=source)
    if not done.ok or not done.value:
        return Outcome((f"memory: could not add it ({_why(done.error)})",), False), None
    lines = [f"pinned (injected for every prompt, as your instruction): {_line(done.value, statement, scope or None)}"]
    if statement != said:
        lines.append("a secret in it was masked before it was stored")
    return Outcome(tuple(lines)), Engram(done.value, statement, scope=scope or None)


async def pin_memory(client: PlurClient, engram_id: str, pinned: bool = True) -> Outcome:
    if not engram_id.strip():
        return Outcome(("memory: pin needs an engram id (see `tmg memory search`)",), False)
    done = await client.pin(engram_id.strip(), pinned)
    if not done.ok or done.value is None:
        return Outcome((f"memory: could not {'pin' if pinned else 'unpin'} {engram_id.strip()} ({_why(done.error)})",),
                       False)
    verb = "pinned (injected for every prompt, as your instruction)" if pinned else "unpinned"
    return Outcome((f"{verb}: {_line(str(done.value.get('id', engram_id)), str(done.value.get('statement', '')))}",))


def _why(error: str | None) -> str:
    return (error or "no reason given").removeprefix("plur_forget: ").removeprefix("plur_pin: ") \
        .removeprefix("plur_learn: ")
