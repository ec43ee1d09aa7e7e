"""Where tmg keeps things: its home (sessions, memory spool, logs), the user's config folder, and
the runtime folder of the memory broker. Read from the environment it is given, never cached: a
test or an embedding program passes its own."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def tmg_home(env: Mapping[str, str]) -> Path:
    """``TMG_HOME``, else ``$XDG_DATA_HOME/tmg``, else ``~/.local/share/tmg``."""
    if env.get("TMG_HOME"):
        return Path(env["TMG_HOME"]).expanduser()
    base = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else Path.home() / ".local" / "share"
    return base / "tmg"


def user_config_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/tmg``, else ``~/.config/tmg``: the user's config, trust, logins, rules, skills."""
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "tmg"


def runtime_dir(env: Mapping[str, str]) -> Path:
    """The broker's private folder: TMG_HOME/run when TMG_HOME is set (one broker per tmg home),
    else $XDG_RUNTIME_DIR/tmg, else the default tmg home's run folder."""
    if env.get("TMG_HOME") or not env.get("XDG_RUNTIME_DIR"):
        return tmg_home(env) / "run"
    return Path(env["XDG_RUNTIME_DIR"]) / "tmg"


def real_path(path: Path | str) -> str:
    """`path` with `~` expanded and every symlink resolved (as given when it cannot be)."""
    try:
        return os.path.realpath(os.path.expanduser(str(path)))
    except (OSError, ValueError):
        return str(path)
