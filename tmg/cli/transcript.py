"""``tmg -t [SESSION]``: read a session back. No model, no memory server, no network."""

from __future__ import annotations

import json

from tmg.checkpoints.marks import mark_rewound
from tmg.session.options import ChatOptions
from tmg.config.loader import load_config
from tmg.environment import Environment
from tmg.errors import UsageError
from tmg.session.history import History
from tmg.paths import tmg_home
from tmg.session.store import SessionStore


def show_transcript(options: ChatOptions, envr: Environment, session: str | None, as_json: bool) -> int:
    mode = options.mode
    if mode is None:
        config, _warnings = load_config(options.config_path, envr.env, envr.cwd)
        mode = config.mode
    store = SessionStore(tmg_home(envr.env))
    ref = store.find(session, mode) if session else store.current(mode)
    if ref is None:
        raise UsageError(f'mode "{mode}" has no session yet; ask something first (tmg "question")')
    out = envr.stdout
    if as_json:
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
