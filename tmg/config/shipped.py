"""The shipped memory server: the pinned PLUR install, used when the config does not name one.

Memory is on by default (memory.md §2). When `MEMORY.SERVER` is `plur` and `MCP_SERVERS` has no
`plur` entry, the config gets this one: `node <entry>` of the project's pinned install, keyword
search only, started in a neutral folder (PLUR reads a `.plur.yaml` walking up from its cwd).
Where the install is looked for, first found wins:
1. `TMG_PLUR_DIR` (the folder `scripts/install-plur` installs into), and only there when set;
2. the repository's `.cache/plur/<version>`, found relative to this package;
3. `plur-mcp` on PATH (a global npm install).
Only cheap file checks here: the config is read on every run, fast paths included.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PLUR_VERSION = "0.20.0"
SHIPPED_SERVER = "plur"
_ENTRY = Path("node_modules") / "@plur-ai" / "mcp" / "dist" / "index.js"
_REPO = Path(__file__).resolve().parents[2]
# A folder with no .plur.yaml above it, on every POSIX machine.
NEUTRAL_DIR = os.path.abspath(os.sep)
HOW_TO_GET_IT = ("memory is off: the PLUR memory server is not installed; run ./scripts/install-plur "
                 "in the tmg repository (needs Node.js with npm), or set MEMORY.ENABLED: false")


def plur_entry(env: Mapping[str, str]) -> Path | None:
    """The pinned server's `dist/index.js`, or None when it is not installed where tmg looks."""
    explicit = env.get("TMG_PLUR_DIR")
    folders = [Path(explicit).expanduser()] if explicit else [_REPO / ".cache" / "plur" / PLUR_VERSION]
    for folder in folders:
        entry = folder / _ENTRY
        if entry.is_file():
            return entry
    return None


def shipped_plur(env: Mapping[str, str]) -> dict[str, Any] | None:
    """The `MCP_SERVERS.plur` entry (raw config keys) of the installed PLUR, or None."""
    path = env.get("PATH", os.defpath)
    entry = plur_entry(env)
    node = shutil.which("node", path=path)
    if entry is not None and node is not None:
        command, args = node, [str(entry)]
    elif not env.get("TMG_PLUR_DIR") and (global_bin := shutil.which("plur-mcp", path=path)) and node:
        command, args = global_bin, []
    else:
        return None
    return {"COMMAND": command, "ARGS": args, "ENV": {"PLUR_DISABLE_EMBEDDINGS": "1"}, "DIR": NEUTRAL_DIR}
