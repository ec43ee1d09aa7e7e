"""Priority 10: the skills catalog and the active skills' bodies, into the system message.

The system message is rebuilt every turn (persona, priority 8) and never stored, so what this
adds cannot be summarised away or duplicated: it comes from the session's skills each time. The
catalog is in name order and descriptions are bounded, so the system message (the start of the
prefix a server caches) stays byte-identical from turn to turn until a skill is activated or a
SKILL.md changes; active bodies follow in activation order, the newest last.
"""

from __future__ import annotations

from typing import Iterable

from tmg.context.pipeline import TurnContext, content_text
from tmg.skills.session import Activation, SessionSkills
from tmg.skills.skill import Skill

ACTIVATE_TOOL = "activate_skill"
CATALOG_BUDGET_CHARS = 12_000  # every description together; past it each is shortened alike
MIN_DESCRIPTION_CHARS = 80


class SkillsTransformer:
    name = "skills"
    priority = 10

    def __init__(self, skills: SessionSkills) -> None:
        self._skills = skills
        self._prompt_id: int | None = None
        self._section: tuple[object, tuple[object, ...], str] | None = None  # (catalog, active, text)

    async def apply(self, ctx: TurnContext) -> None:
        if ctx.prompt_id != self._prompt_id:  # once per prompt: a SKILL.md saved meanwhile is picked up
            self._prompt_id = ctx.prompt_id
            self._skills.refresh()
        section = self._current_section()
        if not section:
            return
        if ctx.messages and ctx.messages[0].get("role") == "system":
            text = content_text(ctx.messages[0]).rstrip()
            ctx.messages[0] = {"role": "system", "content": f"{text}\n\n{section}" if text else section}
        else:
            ctx.messages.insert(0, {"role": "system", "content": section})


    def _current_section(self) -> str:
        """The section, rebuilt only when the catalog or the active set changed (each turn of a
        long tool loop would otherwise format every description again)."""
        catalog, active = self._skills.catalog, tuple(self._skills.active.values())
        cached = self._section
        if cached is None or cached[0] is not catalog or cached[1] != active:
            cached = self._section = (catalog, active, skills_section(catalog.skills.values(), active))
        return cached[2]


def skills_section(catalog: Iterable[Skill], active: Iterable[Activation]) -> str:
    skills, active = list(catalog), list(active)
    parts = []
    if skills:
        parts.append(catalog_text(skills))
    if active:
        parts.append(active_text(active))
    return "\n\n".join(parts)


def catalog_text(skills: list[Skill]) -> str:
    per = max(MIN_DESCRIPTION_CHARS, CATALOG_BUDGET_CHARS // len(skills))
    lines = [
        "# Skills",
        "Skills are instructions for particular tasks. When a request matches a skill's description, call "
        f"{ACTIVATE_TOOL} with its name before you start; its instructions then appear under 'Active skills' "
        "and stay for the rest of the session. Paths a skill mentions are relative to its folder; read such a "
        f"file with {ACTIVATE_TOOL} and its `file` argument.",
        "",
        "Available skills:",
    ]
    for skill in skills:
        lines.append(f"- {skill.name}: {_cut(skill.description, per)}")
    return "\n".join(lines)


def active_text(active: list[Activation]) -> str:
    parts = ["# Active skills",
             "Follow these instructions where they apply (the user or you activated them in this session)."]
    for a in active:
        head = f"## {a.name}\nFolder: {a.folder}"
        if a.files:
            head += f"\nFiles in it: {', '.join(a.files)}"
        parts.append(f"{head}\n\n{a.body.strip()}")
    return "\n\n".join(parts)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
