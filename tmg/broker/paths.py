"""Where the broker lives (a private runtime folder), and what identifies its code."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path

SOCKET_NAME = "broker.sock"
PID_NAME = "broker.pid"
LOCK_NAME = "broker.lock"
LOG_NAME = "broker.log"
DEFAULT_IDLE_S = 15 * 60.0
CACHE_META = "tmg/cache"  # in a tools/call's `_meta`: the broker may answer it from its cache
# sun_path holds 108 bytes on Linux; a deep TMG_HOME (a test's tmp folder) falls back to /tmp.
_MAX_SOCKET_PATH = 100


def broker_enabled(env: Mapping[str, str]) -> bool:
    """`TMG_MEMORY_BROKER=0` makes every run spawn its memory server directly (as before)."""
    return env.get("TMG_MEMORY_BROKER", "1").strip().lower() not in ("0", "false", "no", "off")


def idle_seconds(env: Mapping[str, str]) -> float:
    """How long a broker with nothing to do stays up (`TMG_BROKER_IDLE`, seconds)."""
    try:
        return max(1.0, float(env.get("TMG_BROKER_IDLE", DEFAULT_IDLE_S)))
    except ValueError:
        return DEFAULT_IDLE_S


def runtime_dir(env: Mapping[str, str]) -> Path:
    """The broker's private folder: TMG_HOME/run when TMG_HOME is set (one broker per tmg home),
    else $XDG_RUNTIME_DIR/tmg, else the default tmg home's run folder."""
    from tmg.session.store import tmg_home

    if env.get("TMG_HOME") or not env.get("XDG_RUNTIME_DIR"):
        return tmg_home(env) / "run"
    return Path(env["XDG_RUNTIME_DIR"]) / "tmg"


def socket_path(folder: Path) -> Path:
    """The socket in `folder`, or in a short private folder of its own when the path is too long."""
    path = folder / SOCKET_NAME
    if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(os.fsencode(folder.resolve())).hexdigest()[:16]
    return Path("/tmp") / f"tmg-{os.getuid()}-{digest}" / SOCKET_NAME


def private_dir(folder: Path) -> Path:
    """Create `folder` as 0700 (and make it so if it exists); refuse one owned by someone else."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.stat()
    if info.st_uid != os.getuid():
        raise PermissionError(f"{folder} belongs to another user")
    if info.st_mode & 0o077:
        folder.chmod(0o700)
    return folder


def fingerprint() -> str:
    """The broker's code identity: a client with other code makes an older broker step down."""
    digest = hashlib.sha256(sys.executable.encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]
