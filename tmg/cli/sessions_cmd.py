"""``tmg sessions``: every session with its mode, folder (its project), size and first prompt, * on
the current one of each project; ``--search WORDS`` finds the messages that hold the words."""

from __future__ import annotations

import time
from pathlib import Path

from tmg.environment import Environment
from tmg.errors import UsageError
from tmg.paths import tmg_home
from tmg.project import project_root
from tmg.session.options import ChatOptions
from tmg.session.store import SessionRef, SessionStore

BEFORE_PROJECTS = "(before projects)"  # the folder of a session from before sessions belonged to one


def run_sessions(options: ChatOptions, envr: Environment, search: list[str] | None) -> int:
    store = SessionStore(tmg_home(envr.env))
    mode = _mode_filter(options, envr)
    refs = [r for r in store.list() if mode is None or r.mode == mode]
    if search is not None:
        return _search(store, refs, search, envr)
    if not refs:
        envr.stdout.write("no sessions yet\n" if mode is None else f"no sessions of mode {mode} yet\n")
        return 0
    current = {m: store.currents(m) for m in {r.mode for r in refs}}
    for ref in refs:
        count, first = ref.outline()
        mark = "*" if ref.id in current[ref.mode] else " "
        folder = _shown(store.project_of(ref), envr)
        envr.stdout.write(f"{mark} {ref.id}  {ref.mode:<12} {count:>5} msgs  {folder}  {first}\n")
    return 0


def _mode_filter(options: ChatOptions, envr: Environment) -> str | None:
    """--mode, else the MODE of the config given with -c (its sessions), else every mode."""
    if options.mode is not None or options.config_path is None:
        return options.mode
    from tmg.config.loader import load_config

    config, _warnings = load_config(options.config_path, envr.env, envr.cwd)
    return config.mode


def _search(store: SessionStore, refs: list[SessionRef], words: list[str], envr: Environment) -> int:
    from tmg.session.search import MAX_HITS, search

    if not any(w.strip() for w in words):
        raise UsageError("--search needs the words to look for: tmg sessions --search WORDS")
    # This project's sessions first, then the rest; within each the most recently active first.
    here = project_root(envr.cwd)
    refs = sorted(refs, key=lambda r: (store.project_of(r) != here, -r.last_active()))
    found = search(refs, words)
    out = envr.stdout
    for hit in found.hits:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit.ts)) if hit.ts else "?"
        out.write(f"{hit.ref.id}  {when}  {_shown(store.project_of(hit.ref), envr)}\n  {hit.role}: {hit.snippet}\n")
    if not found.hits:
        out.write(f"no message holds {' '.join(words)!r} (searched {found.sessions_read} sessions)\n")
    if found.cut:
        envr.stderr.write(f"tmg: showing the first {MAX_HITS} matches; add words to narrow the search\n")
    elif found.sessions_left:
        envr.stderr.write(f"tmg: {found.sessions_left} older sessions were not searched (the search reads at most "
                          "64 MB of history); add words or --mode to narrow it\n")
    if found.hits:
        out.write("read one with tmg -t ID, continue it with tmg --resume ID\n")
    return 0


def _shown(folder: Path | None, envr: Environment) -> str:
    if folder is None:
        return BEFORE_PROJECTS
    home = envr.env.get("HOME")
    text = str(folder)
    if home and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")):]
    return text

