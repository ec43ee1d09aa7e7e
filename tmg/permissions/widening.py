"""A reloaded config that would let tools do more than the one in force.

The model cannot change tmg's config without a question (tmg.permissions.control), but a
program it was allowed to run might. So once a tool that writes or runs has been allowed in a
session, a reload whose PERMISSIONS allow more (an ALLOW added, a DENY or ASK dropped, a
looser MODE) is held: the engine keeps judging by the config it had until the user says yes
at a prompt (a one-shot never applies it).
"""

from __future__ import annotations

from typing import Any

_LOOSENESS = {"read-only": 0, "default": 1, "accept-edits": 2, "yolo": 3}


def widened(old: Any, new: Any) -> list[str]:
    """What `new`'s PERMISSIONS allow that `old`'s did not, one phrase each; [] for nothing more."""
    before, after = _rules(old), _rules(new)
    out = [f"ALLOW adds {r}" for r in sorted(after["allow"] - before["allow"])]
    out += [f"DENY drops {r}" for r in sorted(before["deny"] - after["deny"])]
    out += [f"ASK drops {r}" for r in sorted(before["ask"] - after["ask"])]
    was, now = old.permissions.mode or "default", new.permissions.mode or "default"
    if _LOOSENESS.get(now, 3) > _LOOSENESS.get(was, 3):
        out.append(f"MODE {was} becomes {now}")
    return out


def _rules(config: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"allow": set(), "ask": set(), "deny": set()}
    for block in (config.user_permissions, config.permissions):
        if block is not None:
            out["allow"].update(block.allow)
            out["ask"].update(block.ask)
            out["deny"].update(block.deny)
    return out
