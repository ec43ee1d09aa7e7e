"""The git side of memory sync that PLUR 0.20.0's `plur_sync` does not do (docs/memory-sync.md).

PLUR keeps its store (`~/.plur`) in git: a first `plur_sync {remote}` on a store with no
repository makes one and pushes it, later calls commit, pull and push. Observed on the real
server, two cases it gets wrong, which this module mends before tmg calls it:

- Joining a remote that already holds another machine's memory: PLUR makes a repository of its
  own, its push is refused (unrelated history), the remote stays configured with no upstream,
  and every later sync answers "Already in sync." without ever pulling. tmg joins instead: the
  store's files are moved to a backup folder, the remote's branch is checked out with an
  upstream, and the caller adds this machine's engrams back through PLUR (`tmg.memory.sync`).
- A store it synced is "dirty" for ever: `git status` counts the server's own untracked files
  (server.pid, history/). tmg's block in the store's `.gitignore` leaves out everything but
  what PLUR syncs, so `plur_sync_status` says dirty only when memory changed.

Git runs here with the user's environment (their ssh agent), never prompting (a sync may run
with no terminal), each command bounded; the server that syncs gets the same (`git_env`): the
memory server's own environment is the minimal base, without the user's ssh agent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

GIT_TIMEOUT_S = 60.0
# An ssh remote that does not answer fails in seconds, never waits for a password: PLUR holds its
# store's lock while it syncs, and every recall waits for that lock.
_SSH = "ssh -o BatchMode=yes -o ConnectTimeout=10"
# What PLUR's sync commits (its SYNC_PATHS); everything else in the store is machine-local.
SYNCED = ("engrams.yaml", "episodes.yaml", "candidates.yaml", "tensions.yaml", "packs", ".gitignore")
IGNORE_MARK = "# tmg: only what PLUR syncs is tracked"
IGNORE_BLOCK = "\n".join([IGNORE_MARK, "/*", *(f"!/{name}" for name in SYNCED)]) + "\n"
BACKUPS = "backups"  # PLUR's own folder of local copies, never synced (its .gitignore says so)


class GitError(Exception):
    """A git command failed; the message is git's own last line, for the user."""


class Joined(NamedTuple):
    branch: str
    backup: Path | None  # where this machine's store files went (None: it had none)


def git_env(environ: Mapping[str, str]) -> dict[str, str]:
    """What git needs from the user's environment to reach a remote with no terminal: their ssh
    agent, their GIT_SSH_COMMAND (else one that never prompts), no credential prompts."""
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": environ.get("GIT_SSH_COMMAND") or _SSH}
    env.update({key: environ[key] for key in ("SSH_AUTH_SOCK",) if environ.get(key)})
    return env


def git(root: Path, *args: str, timeout: float = GIT_TIMEOUT_S) -> str:
    """`git -C root args`, its stdout stripped. Raises GitError with git's reason."""
    env = dict(os.environ) | git_env(os.environ)
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=timeout,
                              env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took more than {timeout:g} s") from None
    if done.returncode != 0:
        raise GitError(telling_line(done.stderr) or f"git {args[0]} failed ({done.returncode})")
    return done.stdout.strip()


def telling_line(text: str) -> str:
    """The line of git's output that says why: its first `fatal:`/`error:`/`!` line (the later
    ones repeat it more vaguely), else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("hint:")]
    telling = [line for line in lines if line.startswith(("fatal:", "error:", "ERROR:", "!"))]
    return telling[0] if telling else (lines or [""])[-1]


def is_repository(root: Path) -> bool:
    return (root / ".git").exists()


def origin(root: Path) -> str | None:
    try:
        return git(root, "remote", "get-url", "origin") or None
    except GitError:
        return None


def upstream(root: Path) -> str | None:
    """The branch the store's branch tracks (`origin/master`), None when it tracks none."""
    try:
        return git(root, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}") or None
    except GitError:
        return None


def remote_branch(root: Path, url: str) -> str | None:
    """The branch a remote holds memory in: the one its HEAD names, else its only one (master or
    main among several); None when it is empty. Raises GitError when it cannot be reached."""
    listed = git(root if root.is_dir() else Path("/"), "ls-remote", "--symref", url)
    heads = []
    for line in listed.splitlines():
        ref, _, name = line.partition("\t")
        if ref.startswith("ref: refs/heads/") and name == "HEAD":
            return ref.removeprefix("ref: refs/heads/")
        if name.startswith("refs/heads/"):
            heads.append(name.removeprefix("refs/heads/"))
    if len(heads) > 1:
        return next((name for name in ("master", "main") if name in heads), heads[0])
    return heads[0] if heads else None


def tracks(root: Path, url: str) -> bool:
    """Whether the store already syncs with `url`: its origin is `url` and its branch tracks a
    branch of it. Read from `.git/HEAD` and `.git/config` (a session's end runs no git for it)."""
    try:
        head = (root / ".git" / "HEAD").read_text(encoding="utf-8").strip()
        lines = (root / ".git" / "config").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    branch = head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None
    section, origin_url, tracked = "", None, False
    for line in lines:
        line = line.strip()
        if line.startswith("["):
            section = "".join(line.split())
        elif "=" in line:
            key, _, value = (part.strip() for part in line.partition("="))
            if section == '[remote"origin"]' and key == "url":
                origin_url = value
            elif branch and section == f'[branch"{branch}"]' and key == "remote":
                tracked = value == "origin"
    return tracked and origin_url == url


def ensure_ignored(root: Path) -> bool:
    """Add tmg's block to the store's `.gitignore` (made by PLUR's first sync); True when it
    changed (the next sync commits it, and the other machines get it with their next pull)."""
    path = root / ".gitignore"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False  # not a synced store yet: PLUR writes the file when it makes the repository
    if IGNORE_MARK in text:
        return False
    path.write_text(text.rstrip("\n") + "\n\n" + IGNORE_BLOCK, encoding="utf-8")
    return True


def join(root: Path, url: str, branch: str) -> Joined:
    """Make the store a checkout of `url`'s `branch` with an upstream, this machine's synced files
    moved to `backups/tmg-join-<time>/` first (the caller adds their engrams back through PLUR).
    The caller holds PLUR's lock on engrams.yaml. Raises GitError (the store is then as before,
    its files back in place)."""
    present = [name for name in SYNCED if (root / name).exists()]
    backup = None
    if present:
        backup = root / BACKUPS / time.strftime("tmg-join-%Y%m%dT%H%M%S")
        backup.mkdir(parents=True, exist_ok=False)
        for name in present:
            (root / name).rename(backup / name)
    try:
        if not is_repository(root):
            git(root, "init", "-q")
        if origin(root) is None:
            git(root, "remote", "add", "origin", url)
        git(root, "fetch", "-q", "origin", branch)
        git(root, "checkout", "-q", "-f", "-B", branch, f"origin/{branch}")
        git(root, "branch", "-q", f"--set-upstream-to=origin/{branch}")
    except GitError:
        if backup is not None:
            _restore(root, backup, present)
        raise
    return Joined(branch, backup)


def _restore(root: Path, backup: Path, names: list[str]) -> None:
    for name in names:
        target = root / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        (backup / name).rename(target)
    backup.rmdir()


def forget_remote(root: Path) -> None:
    """Drop an `origin` that never got an upstream (a first push that failed), so the next
    `plur_sync {remote}` adds it again and pushes with an upstream (PLUR's own first-push path)."""
    git(root, "remote", "remove", "origin")
