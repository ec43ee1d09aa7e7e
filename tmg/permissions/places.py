"""The files a shell command names, where they would really be: for the secret-file and
control-file checks and for "inside the working folder".

A word is cut into the names it may hold (`--file=.env`, `HEAD:.env`, `open('.env')` in python -c);
`~`, `$HOME` and braces are expanded as the shell would, globs against the folder as it is now;
a relative name is taken from the working folder and from every folder a `cd` before it may
have gone to (then a secret named anywhere it could be counts). Symlinks are resolved: a link
called `notes.txt` to `~/.ssh/id_rsa` is the key.
"""

from __future__ import annotations

import glob
import os
import re
import stat
from functools import lru_cache

from tmg.permissions.control import ControlFiles
from tmg.permissions.sensitive import SensitivePaths

_NAME = re.compile(r"[^\s'\"`;|&<>(){}\[\],=:$\\]+")
_MAX_GLOB = 64  # names a pattern is expanded to, for the checks (a huge folder is judged on a sample)


@lru_cache(maxsize=1024)
def names_in(text: str, home: str) -> tuple[str, ...]:
    """The path-like names inside a word or a program's text."""
    text = text.replace("${HOME}", home).replace("$HOME", home)
    out = []
    for chunk in text.split():
        for expanded in _braces(chunk):
            out.extend(n for n in _NAME.findall(expanded) if not n.startswith("-") and n not in (".", ".."))
    return tuple(out)


def _braces(name: str) -> list[str]:
    """`.{env,x}` -> `.env`, `.x` (one group at a time, as bash expands them)."""
    match = re.search(r"\{([^{}]*,[^{}]*)\}", name)
    if not match:
        return [name]
    head, tail = name[:match.start()], name[match.end():]
    return [w for part in match.group(1).split(",") for w in _braces(head + part + tail)]


class Places:
    """Resolves names for one working folder; says which are secret, control files, or outside."""

    def __init__(self, cwd: str, home: str, sensitive: SensitivePaths, control: ControlFiles) -> None:
        self.cwd = os.path.realpath(cwd)
        self.home = home
        self._sensitive = sensitive
        self._control = control
        self._real: dict[str, str] = {}  # within one check only: a link made by the last command counts
        self._found: dict[tuple[str, tuple[str | None, ...]], list[str]] = {}  # likewise, what a glob matches

    def fresh(self) -> "Places":
        """Forget what was resolved for an earlier check."""
        self._real.clear()
        self._found.clear()
        return self

    def real(self, path: str) -> str:
        """`path` with symlinks resolved (a name right in the working folder costs one lstat)."""
        found = self._real.get(path)
        if found is None:
            if os.path.dirname(path) == self.cwd:
                try:
                    is_link = stat.S_ISLNK(os.lstat(path).st_mode)
                except OSError:
                    is_link = False
                found = os.path.realpath(path) if is_link else path
            else:
                found = os.path.realpath(path)
            self._real[path] = found
        return found

    def candidates(self, name: str, bases: tuple[str | None, ...] = ()) -> list[str]:
        """Where `name` may be (absolute, not yet resolved), from the folder and each `cd` before it."""
        found = self._found.get((name, bases))
        if found is None:
            found = self._found[name, bases] = self._candidates(name, bases)
        return found

    def _candidates(self, name: str, bases: tuple[str | None, ...]) -> list[str]:
        if name == "~" or name.startswith("~/"):
            name = self.home + name[1:]
        elif name.startswith("~"):
            name = os.path.expanduser(name)
        if name.startswith("/"):
            found = [os.path.normpath(name)]
        else:
            found = [os.path.normpath(os.path.join(folder, name)) for folder in self.folders(bases)]
        if any(c in name for c in "*?[") and name not in ("[", "[["):  # `[ -f x ]` is test, not a glob
            # what the pattern matches now first (the question names it), then the pattern itself
            found = [hit for pattern in found for hit in glob.glob(pattern)[:_MAX_GLOB]] + found
        return found

    def folders(self, bases: tuple[str | None, ...]) -> list[str]:
        """The working folder and where each `cd` before a command may have taken it (unknown ones left out)."""
        out, here = [self.cwd], self.cwd
        for base in bases:
            if base is None:
                continue
            if base == "~" or base.startswith("~/"):
                base = self.home + base[1:]
            here = os.path.normpath(os.path.join(here, base))
            out.append(here)
        return out

    def secret(self, name: str, bases: tuple[str | None, ...] = ()) -> str | None:
        """'path: why' when `name` is a file that holds secrets, else None."""
        for path in self.candidates(name, bases):
            real = self.real(path)
            why = self._sensitive.reason(path, real)
            if why:
                return f"{path}{f' (a link to {real})' if real != path else ''}: {why}"
        return None

    def control(self, name: str, bases: tuple[str | None, ...] = ()) -> str | None:
        """'path: why' when `name` is one of tmg's control files, else None."""
        for path in self.candidates(name, bases):
            why = self._control.reason(path, self.real(path))
            if why:
                return f"{path}: {why}"
        return None

    def inside(self, name: str, bases: tuple[str | None, ...] = ()) -> bool:
        """True when every place `name` may be is inside the working folder (and none is unknown)."""
        if None in bases:
            return False
        for path in self.candidates(name, bases):
            real = self.real(path)
            if real != self.cwd and not real.startswith(self.cwd + os.sep):
                return False
        return True
