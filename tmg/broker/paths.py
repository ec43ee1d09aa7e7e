"""The broker's files in its private runtime folder (tmg.paths.runtime_dir), and what identifies its code."""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

LOG_NAME = "broker.log"
TOOLS_UMASK_VAR = "TMG_TOOLS_UMASK"  # the user's umask, for the WARM tool servers a broker starts
DEFAULT_IDLE_S = 15 * 60.0
CACHE_META = "tmg/cache"  # in a tools/call's `_meta`: the broker may answer it from its cache
TIMED_OUT = -32001  # the JSON-RPC error code of a call the broker gave up on at its deadline
DEADLINE_META = "tmg/deadline"  # in a tools/call's `_meta`: the client's bound, seconds (the broker's too)
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


def broker_file(folder: Path, suffix: str) -> Path:
    """This code's broker's `sock`, `pid` or `lock` file in `folder`. A broker per code version:
    two tmg versions used at once (an upgrade while a REPL runs, two installs) each keep a warm
    broker of their own, instead of making each other's step down on every run."""
    return folder / f"broker-{fingerprint()[:12]}.{suffix}"


def socket_path(folder: Path) -> Path:
    """The socket in `folder`, or in a short private folder of its own when the path is too long."""
    path = broker_file(folder, "sock")
    if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(os.fsencode(folder.resolve())).hexdigest()[:16]
    return Path("/tmp") / f"tmg-{os.getuid()}-{digest}" / path.name


def private_dir(folder: Path) -> Path:
    """Create `folder` as 0700 (and make it so if it exists); refuse one owned by someone else, or
    a symlink (in /tmp anyone may plant one where the fallback folder goes)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise PermissionError(f"{folder} is a symlink")
    if info.st_uid != os.getuid():
        raise PermissionError(f"{folder} belongs to another user")
    if info.st_mode & 0o077:
        folder.chmod(0o700)
    return folder


# The packages whose modules the broker's code imports (tests/broker/test_paths.py proves it).
_BROKER_PACKAGES = ("", "broker", "mcp", "config")


def broker_sources() -> list[Path]:
    """Every tmg source file the broker's code may import, and the script it runs PLUR's reads through."""
    return [Path(path) for _name, path in _sources()]


def _sources() -> list[tuple[str, str]]:
    """(name under tmg/, path) of each of `broker_sources`, sorted: os.scandir, not Path.glob, since
    the fingerprint is on a memory run's path (a fifth of the time on ~80 files)."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # tmg/
    found = [(os.path.join("broker", "plur_reader.mjs"), os.path.join(root, "broker", "plur_reader.mjs"))]
    for package in _BROKER_PACKAGES:
        with os.scandir(os.path.join(root, package)) as entries:
            found += [(os.path.join(package, e.name), e.path) for e in entries if e.name.endswith(".py")]
    return sorted(found)


@functools.cache
def fingerprint() -> str:
    """The broker's code identity: it names the broker's files (a broker per version), and a broker
    that finds a client of other code on its socket steps down.
    From each source's size and mtime (a stat, not a read: this is on a memory run's path)."""
    # The environment it runs in, however it is reached (a symlinked venv is the same one).
    digest = hashlib.sha256(f"{os.path.realpath(sys.prefix)}\0{sys.version}".encode())
    for name, path in _sources():
        info = os.stat(path)
        digest.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:20]
