"""Where skills are found, and the catalog of them, re-read only when their files change.

The user's skills live in ``<tmg config dir>/skills`` (``$XDG_CONFIG_HOME/tmg/skills``, the
folder that holds config.yaml and trusted.json) and ``~/.agents/skills`` (shared with other
agents). A project's live in ``./.tmg/skills`` and ``./.agents/skills`` and are read only when
the folder is trusted (``tmg trust``): a cloned repository's skill is instructions to the model
written by someone else. Each skill is a folder ``<root>/<folder>/SKILL.md``.

On a name used twice, a project skill beats a user skill and the earlier root beats the later
one; the one not used is listed by ``/skills`` as shadowed.

Cheap by design: a scan is a directory listing per root and a stat per SKILL.md; files are
parsed again only when their size or mtime changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from tmg.skills.skill import SKILL_FILE, Skill, SkillError, read_skill

MAX_SKILLS = 200  # per root: a folder of thousands is a mistake, and the catalog must stay small


@dataclass(frozen=True)
class SkillRoot:
    path: Path
    origin: str  # "project .agents/skills", "user ~/.agents/skills"
    project: bool


@dataclass(frozen=True)
class Shadowed:
    skill: Skill
    by: Skill


@dataclass
class Catalog:
    """The skills in use, by name in sorted order (a stable system prefix), and what was left out."""

    skills: dict[str, Skill] = field(default_factory=dict)
    shadowed: list[Shadowed] = field(default_factory=list)
    broken: dict[Path, str] = field(default_factory=dict)  # SKILL.md path -> the one-line reason
    untrusted: list[Path] = field(default_factory=list)  # project roots not read: the folder is not trusted

    def names(self) -> list[str]:
        return list(self.skills)


def skill_roots(env: Mapping[str, str], cwd: Path) -> tuple[list[SkillRoot], list[SkillRoot]]:
    """(project roots, user roots), in precedence order."""
    from tmg.paths import user_config_dir

    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    config_dir = user_config_dir(env)
    project = [SkillRoot(cwd / ".tmg" / "skills", "project .tmg/skills", True),
               SkillRoot(cwd / ".agents" / "skills", "project .agents/skills", True)]
    user = [SkillRoot(config_dir / "skills", f"user {_shown(config_dir / 'skills', home)}", False),
            SkillRoot(home / ".agents" / "skills", "user ~/.agents/skills", False)]
    return project, user


def _shown(path: Path, home: Path) -> str:
    try:
        return "~/" + str(path.relative_to(home))
    except ValueError:
        return str(path)


class SkillScanner:
    """Scans the roots into a :class:`Catalog`, re-parsing only files whose stat changed."""

    def __init__(self, env: Mapping[str, str], cwd: Path, trusted: Callable[[Path], bool]) -> None:
        self._project, self._user = skill_roots(env, cwd)
        self._cwd = cwd
        self._trusted = trusted
        self._trust: bool | None = None  # asked once, and only when a project root exists
        self._parsed: dict[Path, tuple[tuple[int, int], Skill | str]] = {}
        self._last_key: tuple | None = None
        self._catalog = Catalog()

    def scan(self) -> Catalog:
        """The current catalog (the same object when nothing changed on disk)."""
        found: list[tuple[SkillRoot, Path, tuple[int, int]]] = []
        untrusted: list[Path] = []
        for root in self._project + self._user:
            entries = _skill_files(root.path)
            if not entries:
                continue
            if root.project and not self._is_trusted():
                untrusted.append(root.path)
                continue
            found.extend((root, path, sig) for path, sig in entries)
        key = (tuple((str(p), s) for _, p, s in found), tuple(untrusted))
        if key == self._last_key:
            return self._catalog
        self._last_key = key
        self._catalog = self._build(found, untrusted)
        return self._catalog

    def _is_trusted(self) -> bool:
        if self._trust is None:
            self._trust = self._trusted(self._cwd)
        return self._trust

    def _build(self, found: list[tuple[SkillRoot, Path, tuple[int, int]]], untrusted: list[Path]) -> Catalog:
        catalog = Catalog(untrusted=untrusted)
        parsed: dict[Path, tuple[tuple[int, int], Skill | str]] = {}
        chosen: dict[str, Skill] = {}
        for root, path, sig in found:
            cached = self._parsed.get(path)
            if cached is not None and cached[0] == sig:
                outcome = cached[1]
            else:
                try:
                    outcome = read_skill(path, root.origin)
                except SkillError as exc:
                    outcome = str(exc)
            parsed[path] = (sig, outcome)
            if isinstance(outcome, str):
                catalog.broken[path] = outcome
            elif outcome.name in chosen:
                catalog.shadowed.append(Shadowed(outcome, chosen[outcome.name]))
            else:
                chosen[outcome.name] = outcome
        self._parsed = parsed
        catalog.skills = dict(sorted(chosen.items()))
        return catalog


def _skill_files(root: Path) -> list[tuple[Path, tuple[int, int]]]:
    """Each ``<root>/<folder>/SKILL.md`` with its (size, mtime_ns), folders in name order."""
    try:
        names = sorted(e.name for e in os.scandir(root) if not e.name.startswith(".") and e.is_dir())
    except OSError:  # no such folder (the usual case), or unreadable
        return []
    out = []
    for name in names[:MAX_SKILLS]:
        path = root / name / SKILL_FILE
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((path, (st.st_size, st.st_mtime_ns)))
    return out
