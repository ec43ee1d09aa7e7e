"""`/memory`: what went with the last request, and why.

Each item the injector put into the last request (its `LastInjection`, in the order it went) is
shown numbered, with its id, whether it is pinned (sent with every prompt) or was recalled for
that prompt's words, its scope, and the heading it went under (the user's standing instructions,
or notes from earlier sessions); `/memory forget N` names one by its number.

The injector records ids and words; pinned-ness and scope are asked of the server when `/memory`
is typed (the pinned set in one call, the scope of a recalled note by its words), bounded, so
nothing is added to a prompt's path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from typing import NamedTuple

from tmg.memory.client import PlurClient
from tmg.memory.injector import LastInjection

LOOKUP_WAIT_S = 3.0
_WORDS_CHARS = 120


class WhyItem(NamedTuple):
    number: int
    id: str
    words: str
    instruction: bool  # went under the standing instructions' heading (else under the notes')
    pinned: bool | None = None  # None: the server could not be asked
    scope: str | None = None


def items_of(last: LastInjection | None, instructions: Collection[str], statements: Mapping[str, str]) -> list[WhyItem]:
    """The last request's items, numbered from 1, with the words the block carried for them."""
    if last is None or last.failed:
        return []
    return [WhyItem(n, i, " ".join((statements.get(i) or preview).split()), i in instructions)
            for n, (i, preview) in enumerate(zip(last.ids, last.previews), start=1)]


async def with_server_facts(client: PlurClient | None, items: list[WhyItem],
                            wait: float = LOOKUP_WAIT_S) -> list[WhyItem]:
    """`items` with pinned-ness and scope from the server (at most `wait` seconds in all; what
    it could not say stays None)."""
    if client is None or not items:
        return items
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    try:
        async with asyncio.timeout_at(deadline):
            pinned = await client.pinned()
    except TimeoutError:
        return items
    if not pinned.ok or pinned.value is None:
        return items
    pins = {e.id: e.scope for e in pinned.value}
    scopes: dict[str, str | None] = dict(pins)
    unknown = [item for item in items if item.id not in pins and item.words]

    async def scope_by_words(item: WhyItem) -> None:
        found = await client.recall(item.words, 5)
        for engram in found.value or ():
            if engram.id == item.id:
                scopes[item.id] = engram.scope

    if unknown:
        tasks = [asyncio.ensure_future(scope_by_words(item)) for item in unknown]
        _done, late = await asyncio.wait(tasks, timeout=max(0.0, deadline - loop.time()))
        for task in late:
            task.cancel()
    return [item._replace(pinned=item.id in pins, scope=scopes.get(item.id)) for item in items]


def why_lines(last: LastInjection | None, items: list[WhyItem]) -> list[str]:
    """The `/memory` lines about the last request."""
    if last is None:
        return ["last request: nothing from memory yet"]
    if last.failed:
        return [f"last request (prompt {last.prompt_id}): no memory went with it, recall failed — {last.failed}"]
    if not items:
        lines = [f"last request (prompt {last.prompt_id}): nothing from memory went with it"]
    else:
        lines = [f"last request (prompt {last.prompt_id}): {len(items)} item(s) from memory went with it"]
        lines += [f"  {_item_line(item)}" for item in items]
        lines.append("  `/memory forget N` forgets item N")
    if last.unresolved:
        lines.append(f"  selected, but no words found (left out): {', '.join(last.unresolved)}")
    if last.left_out:
        lines.append(f"  over the budget, left out: {', '.join(last.left_out)}")
    return lines


def _item_line(item: WhyItem) -> str:
    why = {True: "pinned (sent with every prompt)", False: "recalled for this prompt's words",
           None: "pinned or recalled: not known (the server did not answer)"}[item.pinned]
    scope = f"scope {item.scope}" if item.scope else "scope not known"
    heading = "under your standing instructions" if item.instruction else "under the notes from earlier sessions"
    words = item.words if len(item.words) <= _WORDS_CHARS else item.words[: _WORDS_CHARS - 1].rstrip() + "…"
    return f"{item.number}. {item.id} · {why} · {scope} · {heading}: {words}"
