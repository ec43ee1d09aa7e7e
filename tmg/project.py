"""The project a prompt is typed in, and which memories belong to it (memory.md §4; the
sessions-per-project work of issue 21 names a project the same way).

A project is the git root above the working folder, else the folder itself. Its id is what PLUR
scopes it by (`project:<id>`), so it must be the same in every clone of the repository (issue
27's team sharing): derived from the `origin` remote's URL when there is one
(`github.com/owner/repo`, without scheme, user, password or `.git`), else from the root's path
(`<folder name>-<8 hex of its path>`: readable, and no user name or home layout in the scope).
Finding it reads a few `stat`s up the tree and one small git config file, no subprocess.

PLUR's own scope is a relevance filter, not a wall (measured: `plur_inject_hybrid` with
`scope: project:a` still selects project b's pinned engrams), so `visible` is what keeps
another project's memories out of a request.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

PROJECT_PREFIX = "project:"
_MAX_ID = 120  # PLUR takes scopes of up to 200 characters without whitespace
# String operations, not regular expressions: this runs at every session's start.
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._/-")


class Project(NamedTuple):
    """Where a prompt was typed: its root and the id PLUR scopes it by (a NamedTuple: a frozen
    dataclass costs a one-shot half a millisecond to create at import)."""

    id: str
    root: Path

    @property
    def scope(self) -> str:
        return PROJECT_PREFIX + self.id

    def has_file(self, name: str) -> bool:
        """Whether `name` (as the user wrote it: `Makefile`, `src/app.py`) is a file or folder
        of the project: an instruction that names one is about the project."""
        if not name or name.startswith(("/", "~")) or ".." in Path(name).parts or len(name) > 200:
            return False
        try:
            return (self.root / name).exists()
        except (OSError, ValueError):
            return False


def find_project(cwd: Path) -> Project:
    """The project `cwd` is in: its git root (a `.git` folder, or a worktree's `.git` file),
    else `cwd` itself."""
    cwd = cwd.resolve()
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        if dot_git.exists():
            url = _origin_url(dot_git)
            return Project(remote_id(url) if url else path_id(folder), folder)
    return Project(path_id(cwd), cwd)


def remote_id(url: str) -> str:
    """`host/owner/repo` of a remote URL, the same however it is cloned (https, ssh, scp-like)."""
    url = url.strip()
    head, colon, tail = url.partition(":")
    if "://" not in url and colon and "/" not in head and not tail.startswith("//"):  # git@github.com:owner/repo
        host, path = head.rsplit("@", 1)[-1], tail
    else:
        rest = url.split("://", 1)[-1]
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1]  # user:password@ never reaches a scope
        host = host.split(":", 1)[0]  # nor a port
    path = path.strip("/").removesuffix(".git").strip("/")
    ident = _safe(f"{host}/{path}").strip("-/")
    return ident[:_MAX_ID] or "remote"


def path_id(root: Path) -> str:
    import hashlib  # only for a project without a remote

    name = _safe(root.name).strip("-./") or "root"
    return f"{name[:40]}-{hashlib.sha1(str(root).encode()).hexdigest()[:8]}"


def _safe(text: str) -> str:
    """Lower-case, every run of other characters than [a-z0-9._/-] one dash."""
    out: list[str] = []
    for char in text.lower():
        if char in _SAFE:
            out.append(char)
        elif not out or out[-1] != "-":
            out.append("-")
    return "".join(out)


def visible(scope: str | None, home: str) -> bool:
    """Whether an engram of `scope` may go with a request whose project scope is `home`:
    personal ones (any scope but `project:...`) everywhere, a project's only in that project.
    A request in no known project (`home` is no project scope) filters nothing."""
    if not home.startswith(PROJECT_PREFIX):
        return True
    return not scope or not scope.startswith(PROJECT_PREFIX) or scope == home


def _origin_url(dot_git: Path) -> str | None:
    config = _git_dir(dot_git) / "config"
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    in_origin = False
    for line in lines:
        line = line.strip()
        if line.startswith("["):
            in_origin = "".join(line.split()) == '[remote"origin"]'
        elif in_origin and line.partition("=")[0].strip() == "url":
            return line.partition("=")[2].strip() or None
    return None


def _git_dir(dot_git: Path) -> Path:
    """The folder holding the repository's config: `.git` itself, or for a worktree (a `.git`
    file saying `gitdir: ...`) that worktree's common folder."""
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return dot_git
    if not text.startswith("gitdir:"):
        return dot_git
    gitdir = (dot_git.parent / text.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gitdir
    return (gitdir / common).resolve()
