"""A session's skills: the catalog it offers and the skills it has activated.

An activated skill's body is kept by the session, not in its turns: ``skills.jsonl`` in the
session folder records each activation (name, folder, the body as read), and the skills
transformer puts every active body into the system message on every turn. So a body is never
part of the history that summarisation shortens, a resumed session (or a later one-shot of the
mode) has it again, and activating it twice loads it once. A body whose file changed since is
refreshed by activating it again.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping

from tmg.private_files import private_opener
from tmg.skills.discovery import Catalog, SkillScanner
from tmg.skills.skill import NAME, Skill

SKILLS_FILE = "skills.jsonl"
MAX_BODY_CHARS = 60_000  # one skill's instructions in the system message, at most
MAX_LISTED_FILES = 30  # the files beside SKILL.md named to the model on activation
MAX_FILE_BYTES = 100_000  # one such file read through activate_skill
_LEADING = re.compile(r"^\$([A-Za-z0-9][A-Za-z0-9._-]*)(?=\s|$)")

Say = Callable[[str], None]


@dataclass(frozen=True)
class Activation:
    """An active skill as the session keeps it."""

    name: str
    folder: str
    body: str
    files: tuple[str, ...]
    by: str  # "model" or "user"
    ts: float

    @classmethod
    def of(cls, skill: Skill, by: str) -> Activation:
        body = skill.body
        if len(body) > MAX_BODY_CHARS:
            body = body[:MAX_BODY_CHARS] + f"\n[truncated: {len(skill.body) - MAX_BODY_CHARS} more characters " \
                                           f"in {skill.path}]"
        return cls(skill.name, str(skill.folder), body, _listing(skill.folder), by, round(time.time(), 3))


@dataclass(frozen=True)
class Outcome:
    status: str  # "activated", "refreshed", "already", "read" (a file of it), "failed"
    name: str
    line: str  # for the one who asked: the model's tool result, or the user's line

    @property
    def ok(self) -> bool:
        return self.status != "failed"


class SessionSkills:
    """The skills of one open session. ``warn`` says a problem once on stderr (and in the
    transcript); ``record`` notes an activation in the transcript."""

    def __init__(self, scanner: SkillScanner, session_dir: Path | None, *, warn: Say, record: Say,
                 redact: Callable[[str], str] = lambda s: s) -> None:
        self._scanner = scanner
        self._file = session_dir / SKILLS_FILE if session_dir is not None else None
        self._warn = warn
        self._record = record
        self._redact = redact
        self._reported: set[tuple[str, str]] = set()
        self.active: dict[str, Activation] = self._load()
        self.catalog = Catalog()
        self.refresh()

    # -- the catalog ---------------------------------------------------------------------

    def refresh(self) -> Catalog:
        """Re-scan (cheap when nothing changed) and report, once each, what could not be used."""
        try:
            catalog = self._scanner.scan()
        except Exception as exc:  # noqa: BLE001 - skills must never cost the chat
            self._once("scan", f"could not look for skills ({type(exc).__name__}: {exc}); "
                               "going on with the skills found before")
            return self.catalog
        if catalog is not self.catalog:
            self.catalog = catalog
            for path, reason in catalog.broken.items():
                self._once(str(path), f"{reason} (the chat goes on without it)")
            if catalog.untrusted:
                folder = catalog.untrusted[0].parent.parent
                where = " and ".join(str(r.relative_to(folder)) for r in catalog.untrusted)
                self._once(f"untrusted {folder}", f"project skills in {where} not loaded: this folder is not "
                                                  f"trusted; to use them run: tmg trust {folder}")
        return catalog

    def _once(self, key: str, text: str) -> None:
        if (key, text) not in self._reported:
            self._reported.add((key, text))
            self._warn(text)

    def get(self, name: str) -> Skill | None:
        return self.catalog.skills.get(name)

    # -- activation ----------------------------------------------------------------------

    def activate(self, name: str, by: str) -> Outcome:
        skill = self.catalog.skills.get(name)
        if skill is None:
            known = ", ".join(self.catalog.names()) or "none"
            return Outcome("failed", name, f"there is no skill named {name!r} (known: {known})")
        activation = Activation.of(skill, by)
        held = self.active.get(name)
        if held is not None and (held.body, held.folder, held.files) == (activation.body, activation.folder,
                                                                         activation.files):
            return Outcome("already", name, f"skill {name} is already active; its instructions are in the "
                                            "system message under 'Active skills' (not loaded again)")
        status = "refreshed" if held is not None else "activated"
        self.active.pop(name, None)  # a refreshed body moves to the end: the order is the activation order
        self.active[name] = activation
        self._save(activation)
        self._record(f"skill {name} {status} by the {by}" if by == "model" else f"skill {name} {status} by you")
        what = "reloaded from its changed file" if status == "refreshed" else "activated"
        return Outcome(status, name, f"skill {name} {what}: its instructions are now in the system message under "
                                     f"'Active skills' and stay there for this session; follow them. "
                                     f"Its folder is {activation.folder}")

    def read_file(self, name: str, relative: str) -> Outcome:
        """A file in an active (or activatable) skill's folder, for the model: a reference or a
        script the instructions name. Confined to that folder; activates the skill if needed."""
        if name not in self.active:
            outcome = self.activate(name, "model")
            if not outcome.ok:
                return outcome
        folder = Path(self.active[name].folder).resolve()
        path = (folder / relative).resolve()
        if folder not in path.parents:
            return Outcome("failed", name, f"{relative!r} is not inside the folder of skill {name} ({folder})")
        if not path.is_file():  # a folder, a FIFO (would block), or nothing there
            return Outcome("failed", name, f"{relative} is not a file in the folder of skill {name} ({folder})")
        try:
            with path.open("rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            return Outcome("failed", name, f"cannot read {relative} of skill {name}: {exc.strerror or exc}")
        text = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_FILE_BYTES:
            text += f"\n[truncated at {MAX_FILE_BYTES} bytes]"
        return Outcome("read", name, text)

    def leading_invocation(self, text: str) -> Outcome | None:
        """``$name`` at the very start of a prompt activates that skill (the prompt is sent as typed).

        A ``$word`` that is no skill is left alone; one that looks like a typo of a skill's name
        gets one line, so a misspelt ``$deplyo`` does not silently run without its skill."""
        match = _LEADING.match(text.lstrip())
        if match is None:
            return None
        name = match.group(1)
        if name in self.catalog.skills:
            return self.activate(name, "user")
        close = difflib.get_close_matches(name, self.catalog.names(), n=1, cutoff=0.75)
        if close and NAME.fullmatch(name):
            self._warn(f"no skill named {name}; did you mean ${close[0]}? (the prompt is sent as typed, "
                       "without a skill)")
        return None

    # -- the session file ----------------------------------------------------------------

    def _load(self) -> dict[str, Activation]:
        return load_activations(self._file) if self._file is not None else {}

    def _save(self, activation: Activation) -> None:
        if self._file is None:
            return
        from tmg.redaction import redact_values

        record = redact_values(asdict(activation), self._redact)
        try:
            with open(self._file, "a", encoding="utf-8", opener=private_opener) as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            self._warn(f"could not record the activation of skill {activation.name} in {self._file} "
                       f"({exc.strerror or exc}); it stays active until this session ends")


def load_activations(path: Path) -> dict[str, Activation]:
    """A session's active skills from its file, in activation order (a later record of a name wins)."""
    active: dict[str, Activation] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return active
    for line in lines:
        try:
            raw = json.loads(line)
            activation = Activation(str(raw["name"]), str(raw["folder"]), str(raw["body"]),
                                    tuple(str(f) for f in raw.get("files", ())), str(raw.get("by", "user")),
                                    float(raw.get("ts", 0)))
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line: the activations before it stand
        active.pop(activation.name, None)
        active[activation.name] = activation
    return active


def active_names(path: Path) -> list[str]:
    return list(load_activations(path))


def _listing(folder: Path) -> tuple[str, ...]:
    """The files beside SKILL.md, relative, a few levels deep, hidden ones skipped."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        depth = len(Path(dirpath).relative_to(folder).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if depth < 3 else []
        for name in sorted(filenames):
            if name.startswith(".") or (depth == 0 and name == "SKILL.md"):
                continue
            out.append(str(Path(dirpath, name).relative_to(folder)))
            if len(out) > MAX_LISTED_FILES:
                return (*out[:MAX_LISTED_FILES], "...")
    return tuple(out)


def trusted_folder(env: Mapping[str, str]) -> Callable[[Path], bool]:
    """Whether a project folder is trusted, from the user's trust store (``tmg trust``)."""
    def check(folder: Path) -> bool:
        from tmg.config.trust import TrustStore

        return TrustStore.for_env(env).is_trusted(folder)
    return check


def open_session_skills(env: Mapping[str, str], cwd: Path, session_dir: Path | None, *, warn: Say, record: Say,
                        redact: Callable[[str], str] = lambda s: s) -> SessionSkills:
    return SessionSkills(SkillScanner(env, cwd, trusted_folder(env)), session_dir, warn=warn, record=record,
                         redact=redact)
