"""``tmg -t [SESSION]``: read a session back. No model, no memory server, no network."""

from __future__ import annotations

import json

from tmg.checkpoints.marks import mark_rewound
from tmg.config.mode import plain_mode
from tmg.environment import Environment
from tmg.errors import UsageError
from tmg.paths import tmg_home
from tmg.project import project_root
from tmg.session.options import ChatOptions
from tmg.session.store import SessionRef, SessionStore


def show_transcript(options: ChatOptions, envr: Environment, session: str | None, as_json: bool) -> int:
    mode = options.mode if options.mode is not None else _mode(options.config_path, envr)
    store = SessionStore(tmg_home(envr.env))
    ref = store.find(session, mode) if session else _current(store, mode, envr)
    out = envr.stdout
    if as_json:
        from tmg.session.history import History  # the Markdown transcript needs no history

        warnings: list[str] = []
        history = History(ref.history_path, warn=warnings.append, writable=False)
        for w in warnings:
            envr.stderr.write(f"tmg: warning: {w}\n")
        messages = [{**m, "rewound": True} if history.is_rewound(i) else m for i, m in enumerate(history.messages)]
        json.dump({"session": ref.id, "mode": ref.mode, "messages": messages}, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return 0
    try:
        text = ref.transcript_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = f"# tmg session {ref.id} · mode {ref.mode}\n\n(no transcript yet)\n"
    text = mark_rewound(text, ref.dir)
    if envr.stdout_isatty and not options.raw:
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=out, no_color=envr.no_color).print(Markdown(text))
    else:
        out.write(text)
    out.flush()
    return 0


def _mode(explicit: str | None, envr: Environment) -> str:
    """The config's MODE: read plainly when it is written plainly, else by the whole loader."""
    mode = plain_mode(explicit, envr.env, envr.cwd)
    if mode is None:
        from tmg.config.loader import load_config

        mode = load_config(explicit, envr.env, envr.cwd)[0].mode
    return mode


def _current(store: SessionStore, mode: str, envr: Environment) -> SessionRef:
    """This project's current session; in a TMG_HOME from before projects, the mode's old one."""
    project = project_root(envr.cwd)
    ref = store.current(mode, project)
    if ref is not None:
        return ref
    legacy = store.legacy_current(mode)
    if legacy is not None:
        envr.stderr.write(f"tmg: no session of mode {mode} in {project} yet; showing {legacy.id}, the current "
                          "session from before sessions belonged to projects\n")
        return legacy
    raise UsageError(f'mode "{mode}" has no session in {project} yet; ask something first (tmg "question"), '
                     "or read another project's with tmg -t ID (`tmg sessions` lists them)")
