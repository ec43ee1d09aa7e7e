"""The pinned MCP reference servers (scripts/install-mcp-servers), for MCP-client tests.

`reference_server("everything")` gives the command and args that start one over stdio; the
install runs once (idempotent, ~15 s the first time). Missing node/npm is the only reason a test
may skip, and under CI=true a skip fails the run (tests/support/ci_strict.py).
"""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO / "scripts" / "install-mcp-servers"

# name -> path of its executable inside the install folder
_BINARIES = {
    "everything": "node_modules/.bin/mcp-server-everything",
    "filesystem": "node_modules/.bin/mcp-server-filesystem",
    "memory": "node_modules/.bin/mcp-server-memory",
    "time": "py/bin/mcp-server-time",
    "git": "py/bin/mcp-server-git",
}


@lru_cache(maxsize=1)
def _install_dir() -> Path:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("node/npm are not installed: the MCP reference servers cannot run")
    done = subprocess.run([str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"scripts/install-mcp-servers failed: {done.stderr.strip()}")
    return Path(done.stdout.strip().splitlines()[-1])


def reference_server(name: str, *args: str) -> list[str]:
    """The argv starting reference server ``name`` (everything, filesystem, memory, time, git) over stdio.

    server-everything needs the transport named: `reference_server("everything", "stdio")`."""
    return [str(_install_dir() / _BINARIES[name]), *args]
