"""The broker's files in its private runtime folder (tmg.paths.runtime_dir), and what identifies its code."""

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
TOOLS_UMASK_VAR = "TMG_TOOLS_UMASK"  # the user's umask, for the WARM tool servers a broker starts
DEFAULT_IDLE_S = 15 * 60.0
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


def child_umask(kind: str) -> int:
    """The umask of a server the broker starts (-1: the broker's own). The broker runs with a
    umask of 077 (its socket, pid, lock and log, and a memory server's store, are private); a
    WARM tool server gets the umask of the user who started the broker: it may write the user's
    files, which must get the modes the user expects."""
    if kind == "memory":
        return -1
    try:
        return int(os.environ[TOOLS_UMASK_VAR], 8)
    except (KeyError, ValueError):
        return -1


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
