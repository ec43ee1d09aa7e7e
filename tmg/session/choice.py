"""Which session a run opens: the current one of its mode and project, a new one (``--new``), an
older one by id (``--resume ID``) or the most recently active one of the project (``--continue``).

The rule that keeps one project's conversation out of another's: without an id, a run only ever
continues a session of its own project. A session from before sessions belonged to projects has
no project, so no run continues it on its own; the first run that would have is told once how
to resume it, and ``--resume ID`` adopts it into the project it is resumed in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from tmg.errors import UsageError
from tmg.session.options import SessionWish
from tmg.session.store import SessionRef, SessionStore, unwritable


def choose_session(store: SessionStore, mode: str, project: Path, wish: SessionWish,
                   notice: Callable[[str], None]) -> SessionRef:
    """The session to open (not yet locked), made the project's current one unless it belongs to
    another project."""
    try:
        return _choose(store, mode, project, wish, notice)
    except OSError as exc:
        raise unwritable(store.root, exc) from exc


def _choose(store: SessionStore, mode: str, project: Path, wish: SessionWish,
            notice: Callable[[str], None]) -> SessionRef:
    if wish.resume is not None:
        if not wish.resume:
            raise UsageError("--resume without an ID picks a session in the interactive chat; in a one-shot give "
                             "the ID (`tmg sessions` lists them) or use --continue")
        return _resume(store, mode, project, wish.resume, notice)
    if wish.latest:
        recent = store.of_project(mode, project)
        if recent:
            store.make_current(recent[0], project)
            return recent[0]
        notice(f"--continue: no earlier session of mode {mode} in {project}; starting a new one")
        return store.start_new(mode, project)
    if wish.new:
        return store.start_new(mode, project)
    current = store.current(mode, project)
    if current is not None:
        return current
    legacy = store.legacy_current(mode)
    if legacy is not None:
        notice(f"sessions now belong to a project (the git root, else the folder); session {legacy.id} of mode "
               f"{mode} began before that and is not continued here on its own: `tmg --resume {legacy.id}` "
               "continues it in this project, `tmg sessions` lists every session")
        store.retire_legacy(mode)
    return store.start_new(mode, project)


def _resume(store: SessionStore, mode: str, project: Path, wanted: str,
            notice: Callable[[str], None]) -> SessionRef:
    ref = store.find(wanted, mode)
    if ref.mode != mode:
        raise UsageError(f"session {ref.id} is a session of mode {ref.mode}; resume it with "
                         f"--mode {ref.mode} --resume {ref.id}")
    owner = store.project_of(ref)
    if owner is None:
        store.set_project(ref, project)
        notice(f"session {ref.id} began before sessions belonged to projects; it belongs to {project} from now on")
    elif owner != project:
        notice(f"session {ref.id} belongs to {owner}; it is resumed for this run only (this project's own "
               "session is unchanged)")
        return ref
    store.make_current(ref, project)
    return ref
