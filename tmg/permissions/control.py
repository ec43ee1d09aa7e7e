"""tmg's own control files: what decides what the model may do, so only the user changes them.

The config in use (whatever its path: `-c`, `$TMG_CONFIG`, `./tmg.yaml`, the user's config.yaml),
the user's tmg folder (config, trusted folders, saved permissions, skills, logins), `TMG_HOME`,
git's hooks and configuration (a hook or an alias runs at the next `git commit`) and the skill
folders (a skill's instructions reach the model). A change to one asks in every mode, yolo too,
with a question that names the file; read-only mode refuses it. A `./tmg.yaml` is one even in
a folder not yet trusted: trusting it later must not trust what the model wrote there.

The skill folders follow tmg.skills.discovery.skill_roots (a test holds them together).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from tmg.paths import real_path as _real, tmg_home, user_config_dir

_GIT_PARTS = (("hooks",), ("config",), ("info", "attributes"))  # under any .git folder, or .git/modules/<m>/


class ControlFiles:
    """Tells whether a path is one of tmg's control files, and which (for the question)."""

    def __init__(self, env: Mapping[str, str], cwd: str, configs: Iterable[Path | str | None] = ()) -> None:
        home = Path(env.get("HOME") or Path.home())
        work = Path(cwd)
        self._files: dict[str, str] = {}
        for config in configs:
            if config:
                self._files[_real(config)] = "the tmg config in use (its PERMISSIONS decide what tools may do)"
        if env.get("TMG_CONFIG"):
            self._files.setdefault(_real(env["TMG_CONFIG"]), "tmg's config ($TMG_CONFIG)")
        self._files.setdefault(_real(work / "tmg.yaml"), "this folder's tmg config (./tmg.yaml)")
        self._dirs: list[tuple[str, str]] = [
            (_real(user_config_dir(env)), "your tmg folder (config, trusted folders, saved permissions, skills)"),
            (_real(tmg_home(env)), "TMG_HOME (tmg's sessions and memory)"),
            (_real(work / ".tmg"), "this folder's .tmg (its skills)"),
            (_real(work / ".agents" / "skills"), "this folder's skills (.agents/skills)"),
            (_real(home / ".agents" / "skills"), "your skills (~/.agents/skills)"),
        ]

    def reason(self, path: str, real: str | None = None) -> str | None:
        """Why `path` (absolute; `real`: with symlinks resolved) is a control file, or None."""
        for candidate in (path, real if real is not None else _real(path)):
            why = self._files.get(candidate) or self._in_dirs(candidate) or _git_control(candidate)
            if why:
                return why
        return None

    def _in_dirs(self, path: str) -> str | None:
        for folder, why in self._dirs:
            if path == folder or path.startswith(folder + os.sep):
                return why
        return None


def _git_control(path: str) -> str | None:
    if "/.git/" not in path:
        return None
    parts = Path(path).parts
    for i, part in enumerate(parts):
        if part != ".git":
            continue
        rest = parts[i + 1:]
        if rest[:1] == ("modules",) and len(rest) > 2:
            rest = rest[2:]  # .git/modules/<submodule>/hooks
        for tail in _GIT_PARTS:
            if rest[:len(tail)] == tail:
                what = "a hook runs at the next commit" if tail == ("hooks",) else "it can define commands git runs"
                return f"git's {'/'.join(tail)} ({what})"
    return None
