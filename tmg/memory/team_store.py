"""A repository's team memory: the instructions and notes a team keeps in the repository itself,
in `.plur/engrams.yaml` (PLUR's own name for a project's store), committed with the code, so a
teammate who clones and trusts the repository gets them (docs/memory-sync.md).

The file is loaded by PLUR as a read-only secondary store of the project's scope
(`plur_stores_add {path, scope, shared, readonly}`): PLUR never rewrites it (a learn, a
recurrence, a pin would otherwise dirty the user's checkout); tmg adds to it (`tmg memory share`,
`tmg.memory.team_file`) and a `git pull` changes it. Only a trusted folder's file is loaded
(`tmg trust`: a cloned repository's memory is instructions to the model, like its tmg.yaml):

- PLUR keeps its stores in its own config, for every session, wherever it runs, and has no tool
  that forgets one. So what tmg registers is not the repository's file but a link of its own,
  `$TMG_HOME/team-stores/<digest of the scope>.yaml`, pointed at the trusted checkout's file
  when memory starts there. A folder that is not trusted (never, no longer, or replaced by
  another clone at the same path) has its link removed, and PLUR reads nothing for it (a store
  whose file is missing is empty; measured on the real server, which notices at once).
- One link per scope: checkouts of one repository share the scope (`tmg.project`), and PLUR
  takes one store per scope, so the link follows the trusted checkout memory last started in.

PLUR names a secondary store's engrams `ENG-<prefix>-...` (its `storePrefix` of the scope);
`team_prefix` mirrors that rule, so a shared item is known by its id wherever it shows.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from tmg.memory import payloads
from tmg.memory.client import PlurClient
from tmg.project import Project

TEAM_FILE = Path(".plur") / "engrams.yaml"
LINKS = "team-stores"
_REGISTERED = ".registered"  # beside a link: the PLUR stores it was registered in, one a line


class TeamStore(NamedTuple):
    scope: str
    file: Path  # the repository's file
    link: Path  # what PLUR has registered


def team_file(project: Project) -> Path:
    return project.root / TEAM_FILE


def link_for(home: Path, scope: str) -> Path:
    import hashlib  # only where a team store is involved

    return home / LINKS / f"{hashlib.sha256(scope.encode()).hexdigest()[:16]}.yaml"


def team_prefix(scope: str) -> str:
    """`ENG-<PREFIX>-`: the start PLUR gives the ids of a secondary store of `scope` (its
    storePrefix: the first letters of the scope's first two parts)."""
    for sep in "-_./":
        scope = scope.replace(sep, ":")
    parts = [p for p in scope.split(":") if p]
    if len(parts) >= 2:
        second = parts[1]
        prefix = parts[0][0] + second[0] + (second[1] if len(second) > 1 else second[0])
    else:
        word = parts[0] if parts else scope
        prefix = word[0] + word[len(word) // 2] + word[-1] if len(word) >= 3 else (word * 3)[:3]
    return f"ENG-{prefix.upper()}-"


def original_id(engram_id: str, scope: str) -> str | None:
    """The id an item has in the team file of `scope`, for PLUR's id of it; None when `engram_id`
    is not one of that store's."""
    prefix = team_prefix(scope)
    return "ENG-" + engram_id[len(prefix):] if engram_id.startswith(prefix) else None


def point(project: Project, home: Path, trusted: Callable[[Path], bool]) -> TeamStore | None:
    """At memory's start in `project`: the store to load (its link pointed at the repository's
    file), or None. A project whose folder is not trusted has its scope's link removed; so has
    every link whose checkout is no longer trusted. A few `stat`s when there is no team store."""
    store = None
    file = team_file(project)
    if file.is_file():
        link = link_for(home, project.scope)
        if trusted(project.root):
            _link(link, file)
            store = TeamStore(project.scope, file, link)
        else:
            unlink(link)
    if (home / LINKS).is_dir():
        _sweep(home / LINKS, trusted, keep=store.link if store else None)
    return store


def shared_source(home: Path, engram_id: str, scope: str | None) -> Path | None:
    """The repository file a shared engram is loaded from (None: it is not a team file's)."""
    if not scope or not scope.startswith("project:") or not engram_id.startswith(team_prefix(scope)):
        return None
    return target(link_for(home, scope))


def target(link: Path) -> Path | None:
    """The repository file a link points at (None: no link)."""
    try:
        return Path(os.readlink(link))
    except OSError:
        return None


def unlink(link: Path) -> None:
    link.unlink(missing_ok=True)


def _link(link: Path, file: Path) -> None:
    """Point `link` at `file`, replaced atomically (PLUR may be reading it)."""
    if target(link) == file:
        return
    from tmg.private_files import private_dirs

    private_dirs(link.parent)
    tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    os.symlink(file, tmp)
    os.replace(tmp, link)


def _sweep(folder: Path, trusted: Callable[[Path], bool], keep: Path | None) -> None:
    """Remove the links whose checkout is gone or no longer trusted."""
    for link in folder.glob("*.yaml"):
        file = target(link)
        if link == keep or file is None:
            continue
        root = file.parent.parent  # <root>/.plur/engrams.yaml
        if not file.is_file() or not trusted(root):
            unlink(link)


def needs_registering(store: TeamStore, plur_store: Path) -> bool:
    """Whether the PLUR store at `plur_store` has not had this link registered yet."""
    try:
        done = store.link.with_name(store.link.name + _REGISTERED).read_text(encoding="utf-8").splitlines()
    except OSError:
        return True
    return str(plur_store) not in done


def _registered(store: TeamStore, plur_store: Path) -> None:
    from tmg.atomic_file import replace_file

    marker = store.link.with_name(store.link.name + _REGISTERED)
    try:
        done = marker.read_text(encoding="utf-8").splitlines()
    except OSError:
        done = []
    if str(plur_store) not in done:
        replace_file(marker, ("\n".join([*done, str(plur_store)]) + "\n").encode(), private_folder=True)


async def register(client: PlurClient, store: TeamStore, plur_store: Path) -> str | None:
    """Register the link with PLUR once per PLUR store (`plur_stores_add`, read-only); None when
    it is, else the one line saying why the team store is not loaded."""
    if not needs_registering(store, plur_store):
        return None
    done = await client.call("plur_stores_add", payloads.stores_add_payload(str(store.link), store.scope),
                             _parse_added)
    if not done.ok:
        reason = (done.error or "no reason given").removeprefix("plur_stores_add: ")
        return f"memory: this repository's team memory ({store.file}) is not loaded: {reason}"
    _registered(store, plur_store)
    return None


def _parse_added(data: Any) -> str:
    """plur_stores_add -> its status (added, already_registered); a refusal is a ResultError."""
    from tmg.memory.results import ResultError

    if not isinstance(data, dict) or data.get("success") is False or not isinstance(data.get("status"), str):
        note = data.get("note") or data.get("error") if isinstance(data, dict) else None
        raise ResultError(f"plur_stores_add: {note or 'refused'}")
    return data["status"]


class Registering:
    """A session's ClientSource that registers its team store with the first client it hands
    out (once a session, before the first recall: a few milliseconds, and only in a trusted
    checkout with a team file); a registration that fails is one warning, the chat goes on."""

    def __init__(self, clients: Any, store: TeamStore, plur_store: Path, warn: Callable[[str], None]) -> None:
        self._clients = clients
        self._store = store
        self._plur_store = plur_store
        self._warn = warn
        self._done: Any = None  # the registering task, shared by concurrent first callers
        self._said = False

    @property
    def starting(self) -> bool:
        return self._clients.starting

    async def client(self, wait: float) -> PlurClient | None:
        import asyncio

        client = await self._clients.client(wait)
        if client is None:
            return None
        if self._done is None:
            self._done = asyncio.ensure_future(register(client, self._store, self._plur_store))
        problem = await asyncio.shield(self._done)
        if problem and not self._said:
            self._said = True
            self._warn(problem)
        return client
