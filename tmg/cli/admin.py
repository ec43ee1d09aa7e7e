"""``tmg sessions``, ``tmg config``, ``tmg doctor``: looking at tmg rather than chatting."""

from __future__ import annotations

import json
from typing import Optional

import typer

from tmg.cli.memory_cmd import app as memory_app

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})

app.add_typer(memory_app, name="memory")

ConfigOpt = typer.Option(None, "-c", "--config", help="Config file.")


@app.command()
def sessions(mode: Optional[str] = typer.Option(None, "--mode", help="Only this mode.")) -> int:
    """List sessions: id, mode, messages, first prompt; * marks each mode's current one."""
    from tmg.environment import Environment
    from tmg.session.store import SessionStore, tmg_home

    envr = Environment()
    store = SessionStore(tmg_home(envr.env))
    refs = [r for r in store.list() if mode is None or r.mode == mode]
    if not refs:
        envr.stdout.write("no sessions yet\n")
        return 0
    current = {r.mode: (store.current(r.mode) or r).id for r in refs}
    for ref in refs:
        count, first = _summary(ref.history_path)
        mark = "*" if current.get(ref.mode) == ref.id else " "
        envr.stdout.write(f"{mark} {ref.id}  {ref.mode:<12} {count:>5} msgs  {first}\n")
    return 0


def _summary(path) -> tuple[int, str]:
    count, first = 0, ""
    try:
        with path.open("rb") as f:
            for line in f:
                count += 1
                if not first and b'"role":"user"' in line:
                    try:
                        first = str(json.loads(line).get("content", ""))[:60].replace("\n", " ")
                    except ValueError:
                        pass
    except OSError:
        pass
    return count, first


@app.command("config")
def show_config(config: Optional[str] = ConfigOpt) -> int:
    """Print the resolved config (secrets masked) and where it came from."""
    from tmg.config.inspect import render_config
    from tmg.config.loader import load_config
    from tmg.environment import Environment

    envr = Environment()
    cfg, warnings = load_config(config, envr.env, envr.cwd)
    for w in warnings:
        envr.stderr.write(f"tmg: warning: {w}\n")
    envr.stdout.write(render_config(cfg))
    return 0


@app.command()
def doctor(config: Optional[str] = ConfigOpt) -> int:
    """Check the config, the selected provider's key, and each MCP server."""
    from tmg.cli.doctor import run_doctor
    from tmg.environment import Environment

    return run_doctor(config, Environment())
