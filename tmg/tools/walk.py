"""The files under a folder as the search tools see them, and glob patterns over them.

Inside a git work tree the listing is git's own (`git ls-files`: tracked and untracked files,
minus what .gitignore and the other git excludes say), which is exact and cheap; elsewhere (no
git, or git refuses the repository) every file is walked. Either way `.git` itself is never
listed, and the walk stops at MAX_FILES so a search from `/` ends.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAX_FILES = 100_000
_GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Listing:
    files: list[Path]        # absolute paths, sorted
    capped: bool = False     # MAX_FILES reached: some files were not looked at
    gitignore: bool = False  # git's excludes applied


def files_under(base: Path, limit: int = MAX_FILES) -> Listing:
    """The files under ``base`` (a folder), sorted; a file ``base`` is its own listing."""
    if base.is_file():
        return Listing([base])
    if _in_work_tree(base) and shutil.which("git"):
        listed = _git_files(base, limit)
        if listed is not None and listed.files:  # none: a folder git ignores whole, named on purpose
            return listed
    return _walk(base, limit)


def _in_work_tree(base: Path) -> bool:
    return any((folder / ".git").exists() for folder in (base, *base.parents))


def _git_files(base: Path, limit: int) -> Listing | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(base), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True, timeout=_GIT_TIMEOUT_S, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:  # not really a work tree, or "dubious ownership": walk instead
        return None
    names = sorted({n for n in os.fsdecode(out.stdout).split("\0") if n})
    files = []
    for name in names:
        path = base / name
        if path.is_file():  # tracked files deleted in the work tree and submodules are not files
            files.append(path)
            if len(files) >= limit:
                return Listing(sorted(files), capped=True, gitignore=True)
    return Listing(sorted(files), gitignore=True)


def _walk(base: Path, limit: int) -> Listing:
    files: list[Path] = []
    for folder, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        here = Path(folder)
        for name in sorted(names):
            path = here / name
            if path.is_file():
                files.append(path)
                if len(files) >= limit:
                    return Listing(sorted(files), capped=True)
    return Listing(sorted(files))


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """A test of a `/`-separated path relative to the search folder. Without a `/` the pattern
    matches a file's name at any depth (`*.py`); with one, the whole relative path (`src/**/*.ts`).
    `*` and `?` stay within one folder, `**` spans folders, `[abc]` and `{a,b}` as in shells."""
    pattern = pattern.strip().removeprefix("./")
    regex = re.compile(_translate(pattern) + r"\Z", re.DOTALL)
    if "/" not in pattern:
        return lambda rel: regex.match(rel.rsplit("/", 1)[-1]) is not None
    return lambda rel: regex.match(rel) is not None


def _translate(pattern: str) -> str:
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1:end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
            continue
        elif c == "{" and (end := pattern.find("}", i)) != -1:
            choices = pattern[i + 1:end].split(",")
            out.append("(?:" + "|".join(_translate(choice) for choice in choices) + ")")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
