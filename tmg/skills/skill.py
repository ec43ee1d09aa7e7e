"""One skill: its SKILL.md read leniently into a name, a description, other keys and a body.

Lenient because skills are written by hand for many agents: a description with an unquoted
``: `` inside is not valid YAML (the commonest reason skills silently vanish elsewhere), so when
YAML refuses the front matter, its top-level ``key: value`` lines are read as plain text.
What cannot be read at all is a :class:`SkillError` naming the file and the fix.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024  # a skill is a page or two; a bigger file is refused, not read whole
MAX_DESCRIPTION_CHARS = 1024  # the Agent Skills limit
MAX_NAME_CHARS = 64
# Lower-case letters, digits and hyphens per the format; upper case, '_' and '.' tolerated (other
# agents accept them), nothing that could not be typed after a '/' or '$' or sent as an enum value.
NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?")
_FENCE = re.compile(r"^---[ \t]*$", re.M)
_PLAIN_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:[ \t]*(.*)$")
_YAML_STARTS = set("'\"[{>|&*!%@`#-?:")  # a value starting so means more than plain text


class SkillError(Exception):
    """A SKILL.md that cannot be used; the message names what is wrong and how to fix it."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path  # the SKILL.md
    body: str  # the instructions after the front matter
    origin: str  # where it was found, for /skills: "project .agents/skills", "user ~/.agents/skills"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # the other front-matter keys

    @property
    def folder(self) -> Path:
        return self.path.parent


def read_skill(path: Path, origin: str) -> Skill:
    """Parse the SKILL.md at ``path``. Raises SkillError."""
    return parse_skill(_read_text(path), path, origin)


def parse_skill(text: str, path: Path, origin: str) -> Skill:
    front, body = _split(text, path)
    fields = _front_matter(front, path)
    name = _text(fields.pop("name", None))
    description = " ".join(_text(fields.pop("description", None)).split())
    missing = [k for k, v in (("name", name), ("description", description)) if not v]
    if missing:
        raise SkillError(f"skill {path}: the front matter has no {' and no '.join(missing)}; "
                         "add `name: my-skill` and `description: what it does and when to use it`")
    if not NAME.fullmatch(name):
        raise SkillError(f"skill {path}: the name {name[:80]!r} is not usable; use lower-case letters, "
                         f"digits and hyphens (at most {MAX_NAME_CHARS} characters)")
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
    return Skill(name, description, path, body.strip("\n"), origin, fields)


def _read_text(path: Path) -> str:
    """A regular file's text, bounded; never blocks on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise SkillError(f"skill {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SkillError(f"skill {path}: not a regular file")
        data = os.read(fd, MAX_SKILL_BYTES + 1)
        while len(data) <= MAX_SKILL_BYTES:
            more = os.read(fd, MAX_SKILL_BYTES + 1 - len(data))
            if not more:
                break
            data += more
    except OSError as exc:
        raise SkillError(f"skill {path}: cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > MAX_SKILL_BYTES:
        raise SkillError(f"skill {path}: larger than {MAX_SKILL_BYTES // 1024} KB; keep SKILL.md short "
                         "and move the detail into files beside it")
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def _split(text: str, path: Path) -> tuple[str, str]:
    """(front matter, body). The file must open with a ``---`` line and close it with another."""
    text = text.replace("\r\n", "\n")
    first = text.split("\n", 1)[0]
    if not _FENCE.fullmatch(first):
        raise SkillError(f"skill {path}: no front matter; start the file with a `---` line, "
                         "`name:` and `description:`, and another `---`")
    rest = text[len(first) + 1:]
    end = _FENCE.search(rest)
    if end is None:
        raise SkillError(f"skill {path}: the front matter is not closed; add a `---` line after it")
    return rest[: end.start()], rest[end.end():]


def _front_matter(front: str, path: Path) -> dict[str, Any]:
    simple = _simple(front)
    if simple is not None:  # the usual front matter: no YAML import on a one-shot's path
        return simple
    from tmg.config.source import load_yaml

    try:
        data = load_yaml(front) if front.strip() else {}
    except Exception:  # noqa: BLE001 - any YAML failure: read the plain lines instead
        data = None
    if isinstance(data, dict):
        return {str(k): v for k, v in data.items()}
    plain = _plain_lines(front)
    if not plain:
        raise SkillError(f"skill {path}: the front matter is not `key: value` lines; quote values that "
                         "contain ': ' (description: \"...\")")
    return plain


def _simple(front: str) -> dict[str, Any] | None:
    """Front matter of plain one-line ``key: text`` values only, else None (leave it to YAML)."""
    fields: dict[str, Any] = {}
    for line in front.split("\n"):
        if not line.strip():
            continue
        match = _PLAIN_KEY.match(line)
        if match is None:
            return None
        value = match.group(2).strip()
        if not value or value[0] in _YAML_STARTS or " #" in value:
            return None
        fields[match.group(1)] = value
    return fields


def _plain_lines(front: str) -> dict[str, Any]:
    """Top-level ``key: value`` lines as text (a value runs to the end of its line; indented lines
    continue it), quotes around a whole value removed."""
    fields: dict[str, Any] = {}
    key = None
    for line in front.split("\n"):
        match = _PLAIN_KEY.match(line)
        if match:
            key = match.group(1)
            fields[key] = _unquote(match.group(2).strip())
        elif key is not None and line[:1] in (" ", "\t") and line.strip():
            fields[key] = f"{fields[key]} {line.strip()}".strip()
    return fields


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return str(value).strip()
