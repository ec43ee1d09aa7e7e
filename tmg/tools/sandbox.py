"""The OS sandbox of the shell tool: bubblewrap (`bwrap`), as Codex and Claude Code run commands on Linux.

A confined command sees:
- the whole filesystem read-only (`--ro-bind / /`) except the working folder, the git folder of
  the repository it is in (a worktree's or a subfolder's `git commit` works), the package caches
  that exist (`~/.cache`, `~/.npm`, ...: build tools read and write them; bubblewrap 0.8, Debian
  12's, has no overlay to make them private), `$TMPDIR` and `SANDBOX.WRITABLE`; a private `/tmp`;
  a `/dev` of its own (null, zero, random, tty, shm) and the `/proc` of its own pid namespace
  (tmg's environment, provider keys and all, is not in it);
- read-only again inside those: what must stay the user's (`.git/hooks` and `.git/config`: a hook
  runs at the user's next commit; the config in use, `TMG_HOME`, tmg's config folder, the
  project's skill folders);
- hidden: `/run` and `$XDG_RUNTIME_DIR`, where the host's daemons listen (a unix socket is
  reachable whatever the mount: the D-Bus session bus starts programs outside any sandbox,
  `docker.sock` is root), and the memory broker's socket folder;
- no network (`--unshare-net`: a loopback of its own) unless `SANDBOX.NETWORK: true`;
- no capabilities, as root too: bubblewrap makes a user namespace only for other users, and root
  with CAP_SYS_ADMIN could remount the root writable (`--unshare-user --cap-drop ALL`).

Codex adds a seccomp filter that denies connect(), Claude Code one that denies AF_UNIX sockets;
both break test servers and multiprocessing inside the folder. With the network namespace and
the socket folders hidden there is little left for such a filter to stop; a socket the user
keeps elsewhere in HOME stays reachable (the README says so).

Whether bubblewrap works here is tried once per process, on the first command (a no-op under the
same namespaces, some milliseconds), and cached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Per-user package caches build tools write (npm needs its own even for `install --offline`).
_CACHES = (".cache", ".npm", ".yarn", ".pnpm-store", ".cargo/registry", ".cargo/git", "go/pkg/mod")
_INSTALL = "install bubblewrap (e.g. apt-get install bubblewrap)"
_USERNS = ("let unprivileged users create user namespaces (sysctl kernel.unprivileged_userns_clone=1; "
           "on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0)")


class SandboxUnavailable(Exception):
    """SANDBOX.MODE is on, and the sandbox cannot work here: the command does not run."""


@dataclass(frozen=True)
class Availability:
    usable: bool
    why: str = ""  # why not, with what would fix it: "bubblewrap is not installed; install ..."
    bwrap: str = ""


@dataclass(frozen=True)
class Confinement:
    """One command's sandbox: the words that go before the command, and what they allow."""

    prefix: tuple[str, ...]
    cwd: str
    writable: tuple[str, ...]  # real paths
    protected: tuple[str, ...]  # read-only inside them
    network: bool


_PROBED: dict[str, Availability] = {}


def _namespaces() -> list[str]:
    """The isolation every confined command gets; the probe tries exactly these.

    Not `--new-session`: the shell tool starts bwrap in a session of its own without a terminal
    (stdin empty, /dev private: no tty to push keys into), and one process group lets a timeout
    kill bwrap and the command at once; whatever leaves the group dies with the pid namespace."""
    user = ["--unshare-user"] if os.geteuid() == 0 else []  # others get a user namespace anyway
    return ["--die-with-parent", *user, "--cap-drop", "ALL", "--unshare-pid"]


def bubblewrap(env: Mapping[str, str] | None = None) -> Availability:
    """Whether bubblewrap can confine a command here, tried once per process."""
    if not sys.platform.startswith("linux"):
        return Availability(False, "the OS sandbox needs Linux (bubblewrap)")
    found = shutil.which("bwrap", path=(env or os.environ).get("PATH"))
    if found is None:
        return Availability(False, f"bubblewrap (bwrap) is not installed; {_INSTALL}")
    if found not in _PROBED:
        _PROBED[found] = _probe(found)
    return _PROBED[found]


def _probe(bwrap: str) -> Availability:
    true = shutil.which("true") or "/bin/true"
    argv = [bwrap, *_namespaces(), "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--", true]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(False, f"bubblewrap ({bwrap}) could not be run ({exc})", bwrap)
    if done.returncode == 0:
        return Availability(True, bwrap=bwrap)
    said = next((line.strip() for line in reversed(done.stderr.splitlines()) if line.strip()), "")
    said = said.removeprefix("bwrap: ") or f"exit code {done.returncode}"
    fix = _USERNS if "namespace" in said.lower() or "operation not permitted" in said.lower() else (
        "it may be running in a container that does not allow it")
    return Availability(False, f"bubblewrap cannot create its sandbox here ({said}); {fix}", bwrap)


class Sandbox:
    """Confines each shell command as the config says now (SANDBOX reloads live).

    ``settings`` returns the current Config (its ``sandbox`` block and ``source``). Whatever the
    user should know is said once per session through ``warn``."""

    def __init__(self, cwd: Path, env: Mapping[str, str], settings: Callable[[], Any],
                 warn: Callable[[str], None] = lambda _t: None,
                 probe: Callable[[Mapping[str, str]], Availability] = bubblewrap) -> None:
        self._cwd = Path(cwd)
        self._env = env
        self._settings = settings
        self._warn = warn
        self._probe = probe
        self._told: set[str] = set()

    def availability(self) -> Availability:
        return self._probe(self._env)

    def active(self) -> bool:
        """Whether the next command would run confined."""
        return self._settings().sandbox.mode != "off" and self.availability().usable

    def confine(self) -> Confinement | None:
        """The next command's sandbox, or None when it runs as the user (off; auto where bubblewrap
        does not work, said once). Raises SandboxUnavailable when MODE is on and it cannot work."""
        config = self._settings()
        settings = config.sandbox
        if settings.mode == "off":
            return None
        found = self.availability()
        if not found.usable:
            if settings.mode == "on":
                self._tell(f"SANDBOX.MODE is on, but {found.why}; shell commands do not run until it works "
                           "(or SANDBOX.MODE is auto or off)")
                raise SandboxUnavailable(f"the OS sandbox is required (SANDBOX.MODE: on) but cannot work here: "
                                         f"{found.why}. Tell the user; the command did not run.")
            self._tell(f"shell commands run without the OS sandbox: {found.why} (SANDBOX.MODE: off stops this line)")
            return None
        return self._confinement(found.bwrap, config)

    def _confinement(self, bwrap: str, config: Any) -> Confinement:
        settings = config.sandbox
        home = Path(self._env.get("HOME") or Path.home())
        cwd = _real(self._cwd)
        git = self._git_dirs(cwd)
        writable = [cwd, *git]
        writable += [p for p in (_real(home / c) for c in _CACHES) if p.is_dir()]
        if self._env.get("TMPDIR"):
            writable.append(_real(Path(self._env["TMPDIR"])))
        for text in settings.writable:
            path = _real(home / text[1:].lstrip("/") if text == "~" or text.startswith("~/") else Path(text), cwd)
            if path.exists():
                writable.append(path)
            else:
                self._tell(f"SANDBOX.WRITABLE names {path}, which does not exist; it is left out of the sandbox")
        writable = _outermost([p for p in writable if p.exists() and p != Path("/tmp")])
        # Never a folder the working folder is in: that would make the working folder read-only.
        protected = [p for p in self._control_paths(cwd, git, config)
                     if p.exists() and _under_any(p, writable) and not _under(cwd, p)]
        args = [bwrap, *_namespaces(), *([] if settings.network else ["--unshare-net"]),
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        if _under(_real(home), Path("/tmp")) and home.is_dir():  # a HOME in /tmp stays readable (~/.gitconfig)
            args += ["--ro-bind", str(_real(home)), str(_real(home))]
        for path in writable:
            args += ["--bind", str(path), str(path)]
        for path in protected:
            args += ["--ro-bind", str(path), str(path)]
        for path in self._hidden(writable):
            args += ["--tmpfs", str(path)]
        resolv = _real(Path("/etc/resolv.conf"))
        if settings.network and _under(resolv, Path("/run")) and resolv.exists():
            args += ["--ro-bind", str(resolv), str(resolv)]  # DNS through systemd-resolved's /run file
        args += ["--chdir", str(self._cwd), "--"]
        return Confinement(tuple(args), str(cwd), tuple(map(str, writable)), tuple(map(str, protected)),
                           settings.network)

    def _git_dirs(self, cwd: Path) -> list[Path]:
        """The git folders of the repository ``cwd`` is in: its `.git`, or for a worktree (a `.git`
        file) the folder it points to and the repository's common one."""
        for folder in (cwd, *cwd.parents):
            dot = folder / ".git"
            if dot.is_dir():
                return [dot]
            if dot.is_file():
                try:
                    text = dot.read_text(encoding="utf-8", errors="replace").strip()
                except OSError:
                    return []
                if not text.startswith("gitdir:"):
                    return []
                own = _real(folder / text[len("gitdir:"):].strip())
                try:
                    common = _real(own / (own / "commondir").read_text(encoding="utf-8").strip())
                except OSError:
                    common = own
                return list(dict.fromkeys(p for p in (own, common) if p.is_dir()))
        return []

    def _control_paths(self, cwd: Path, git: list[Path], config: Any) -> list[Path]:
        """What no command may change, wherever it lies: git's hooks and config (a hook runs at the
        user's next commit), tmg's config in use, its config folder and home, skill folders."""
        from tmg.paths import tmg_home, user_config_dir

        paths = [p for folder in git for p in (folder / "hooks", folder / "config")]
        if getattr(config, "source", None) is not None:
            paths.append(Path(config.source))
        paths += [user_config_dir(self._env), tmg_home(self._env), cwd / ".tmg", cwd / ".agents" / "skills"]
        return list(dict.fromkeys(_real(p) for p in paths))

    def _hidden(self, writable: list[Path]) -> list[Path]:
        """Folders where the host's daemons listen, replaced by empty ones (never one that holds a
        writable folder: that would hide the working folder)."""
        from tmg.paths import runtime_dir

        paths = [Path("/run"), runtime_dir(self._env)]
        if self._env.get("XDG_RUNTIME_DIR"):
            paths.append(Path(self._env["XDG_RUNTIME_DIR"]))
        real = list(dict.fromkeys(_real(p) for p in paths))
        return [p for p in real if p.is_dir() and not _under_any(p, [q for q in real if q != p])
                and not any(_under(w, p) for w in writable)]

    def _tell(self, text: str) -> None:
        if text not in self._told:
            self._told.add(text)
            self._warn(text)


def _real(path: Path, base: Path | None = None) -> Path:
    if base is not None and not path.is_absolute():
        path = base / path
    return Path(os.path.realpath(path))


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _under_any(path: Path, folders: list[Path]) -> bool:
    return any(_under(path, f) for f in folders)


def _outermost(paths: list[Path]) -> list[Path]:
    """Each folder once, none inside another already listed (its bind would be redundant)."""
    kept: list[Path] = []
    for path in sorted(dict.fromkeys(paths), key=lambda p: len(p.parts)):
        if not _under_any(path, kept):
            kept.append(path)
    return kept
