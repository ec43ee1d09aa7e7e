"""What ``/skills`` and ``tmg skills`` print: each skill, where it came from, and what was left out."""

from __future__ import annotations

from typing import Collection

from tmg.skills.discovery import Catalog

DESCRIPTION_CHARS = 70


def listing_lines(catalog: Catalog, active: Collection[str] = (), commands: Collection[str] = (),
                  where: str = "") -> list[str]:
    """Lines for the user. ``commands``: built-in slash commands, which a skill's ``/name`` cannot
    override (``$name`` still reaches it)."""
    lines: list[str] = []
    if catalog.skills:
        lines.append("skills (activate one with /NAME [request] or $NAME at the start of a prompt; "
                     "the model activates them itself when a request matches):")
        width = max(len(n) for n in catalog.skills)
        for name, skill in catalog.skills.items():
            description = skill.description
            if len(description) > DESCRIPTION_CHARS:
                description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
            notes = [skill.origin]
            if name in active:
                notes.append("active")
            if name in commands:
                notes.append(f"/{name} is a built-in command: use ${name}")
            lines.append(f"  {name:<{width}}  {description}  ({'; '.join(notes)})")
    else:
        lines.append("no skills found; a skill is a folder with a SKILL.md (name and description front "
                     f"matter) in {where or '~/.config/tmg/skills, ~/.agents/skills or ./.agents/skills'}")
    extra = [n for n in active if n not in catalog.skills]
    if extra:
        lines.append(f"  active from earlier in this session (no longer found on disk): {', '.join(extra)}")
    for s in catalog.shadowed:
        lines.append(f"  not used: {s.skill.name} from {s.skill.origin} ({s.skill.path}); "
                     f"the one from {s.by.origin} has the same name")
    for path, reason in catalog.broken.items():
        lines.append(f"  not loaded: {reason}")
    if catalog.untrusted:
        folder = catalog.untrusted[0].parent.parent
        roots = " and ".join(str(r.relative_to(folder)) for r in catalog.untrusted)
        lines.append(f"  not loaded: project skills in {roots} (this folder is not trusted; "
                     f"to use them run: tmg trust {folder})")
    return lines
