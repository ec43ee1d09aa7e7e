"""Looking after what memory holds, through PLUR's own tools (never by editing its files):
list the standing instructions, search, forget, pin and unpin (`tmg memory ...`, `/memory forget`).

Each operation returns the lines to show and whether it worked; a failure is one line saying
what happened, with the server's own reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from tmg.memory.client import PlurClient

SEARCH_LIMIT = 20
_STATEMENT_CHARS = 160


@dataclass(frozen=True)
class Outcome:
    lines: tuple[str, ...]
    ok: bool = True


def _line(engram_id: str, statement: str) -> str:
    text = " ".join(statement.split())
    if len(text) > _STATEMENT_CHARS:
        text = text[: _STATEMENT_CHARS - 1].rstrip() + "…"
    return f"{engram_id}  {text}"


async def list_memory(client: PlurClient) -> Outcome:
    """The pinned set (the standing instructions injected for every prompt) and the store's size."""
    pinned = await client.pinned()
    if not pinned.ok or pinned.value is None:
        return Outcome((f"memory: could not list the pinned engrams ({pinned.error})",), False)
    lines = [f"standing instructions (pinned, injected for every prompt): {len(pinned.value)}"]
    lines += [f"  {_line(e.id, e.statement)}" for e in pinned.value]
    status = await client.status()
    if status.ok and status.value is not None:
        lines.append(f"store: {status.value.engram_count} engram(s), {status.value.episode_count} episode(s); "
                     "`tmg memory search WORDS` finds the others")
    return Outcome(tuple(lines))


async def search_memory(client: PlurClient, query: str, scope: str = "") -> Outcome:
    if not query.strip():
        return Outcome(("memory: search needs some words",), False)
    found = await client.recall(query.strip(), SEARCH_LIMIT, scope)
    if not found.ok or found.value is None:
        return Outcome((f"memory: search failed ({found.error})",), False)
    if not found.value:
        return Outcome((f"no memory matches {query.strip()!r}",))
    return Outcome(tuple(_line(e.id, e.statement) for e in found.value))


async def forget_memory(client: PlurClient, engram_id: str) -> Outcome:
    if not engram_id.strip():
        return Outcome(("memory: forget needs an engram id (see `tmg memory list` or `search`)",), False)
    done = await client.forget(engram_id.strip(), reason="forgotten by the user with tmg")
    if not done.ok or done.value is None:
        return Outcome((f"memory: could not forget {engram_id.strip()} ({_why(done.error)})",), False)
    return Outcome((f"forgotten: {_line(done.value.id, done.value.statement)}",))


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
    return (error or "no reason given").removeprefix("plur_forget: ").removeprefix("plur_pin: ")
