"""Taking back what memory learned from rewound prompts (`tmg rewind`, `/rewind`).

The learning hook records each write that landed against the prompt that caused it (the
checkpoint log): the standing instructions pinned from the user's words (`plur_learn`, retired
with `plur_forget`, which keeps PLUR's history of them) and the episodes captured from answers
(removed from PLUR's episodes file, as `tmg memory forget EP-...` does, where the server keeps
one). What cannot be retracted is said, with the id and the command that would do it later:
- an engram another, kept prompt also taught (PLUR returns the same id for the same words), or one
  minted before the rewound prompt's day (it was in memory before: the prompt only repeated it);
- an episode of a server that keeps no episodes file (fakeplur), or one PLUR no longer has;
- anything, when no memory server can be reached now.
A write still waiting in the spool (the server was down) is not in the record: it lands later.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from typing import Any

from tmg.memory.client import PlurClient

_MINTED = re.compile(r"^ENG-(\d{4}-\d{2}-\d{2})-")
REASON = "taken back by tmg rewind: the prompt that taught it was rewound"


async def retract(client: PlurClient | None, writes: list[dict[str, Any]], kept_ids: Iterable[str] = ()) -> list[str]:
    """Retract ``writes`` (checkpoint records: kind, id, text, p); ``kept_ids``: ids recorded by
    prompts that stay. The lines saying what was retracted and what was not."""
    if not writes:
        return []
    if client is None:
        ids = ", ".join(w["id"] for w in writes)
        return [f"memory: not retracted ({ids}): no memory server could be reached; "
                "`tmg memory forget ID` retracts one later"]
    kept = set(kept_ids)
    lines = []
    for write in writes:
        memory_id, text = str(write.get("id", "")), _short(str(write.get("text", "")))
        if write.get("kind") == "capture":
            lines.append(await _episode(client, memory_id, text))
            continue
        if memory_id in kept:
            lines.append(f"memory: kept {memory_id} \"{text}\": a prompt that stays taught it too")
            continue
        day = _MINTED.match(memory_id)
        taught = time.strftime("%Y-%m-%d", time.gmtime(float(write.get("p", 0))))
        if day and day.group(1) < taught:
            lines.append(f"memory: kept {memory_id} \"{text}\": it was in memory before the rewound prompt "
                         f"(`tmg memory forget {memory_id}` retracts it)")
            continue
        done = await client.forget(memory_id, reason=REASON)
        if done.ok:
            lines.append(f"memory: retracted the instruction {memory_id} \"{text}\" (no longer pinned or recalled)")
        else:
            lines.append(f"memory: could not retract {memory_id} ({done.error}); `tmg memory forget {memory_id}` "
                         "tries again")
    return lines


async def _episode(client: PlurClient, episode_id: str, text: str) -> str:
    from tmg.memory.manage import forget_episode_by_id

    outcome = await forget_episode_by_id(client, episode_id)
    if outcome.ok:
        return f"memory: removed the episode {episode_id} \"{text}\""
    why = outcome.lines[0].partition(f"{episode_id} (")[2].rstrip(")") or "the server did not say"
    return f"memory: the episode {episode_id} \"{text}\" stays in the timeline ({why})"


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
