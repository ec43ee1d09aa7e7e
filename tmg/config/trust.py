"""Folder trust (SPEC §3): a project's ``./tmg.yaml`` may not run code or send data elsewhere
until the user trusts its folder; until then what it may not do is withheld (tmg.config.screen).
The user's own config (``-c``, ``TMG_CONFIG``, the XDG file) is always trusted.

Trust is kept in ``$XDG_CONFIG_HOME/tmg/trusted.json`` (0600, replaced atomically), one entry
per folder: its resolved real path plus the folder's device and inode. Resolving means trusting
through a symlink trusts the folder it points at, and a link re-pointed elsewhere is not trusted;
the inode means a folder deleted and re-cloned (or another one moved in) at the same path is
asked about again.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from tmg.config.discovery import UserFile
from tmg.config.private_file import write_private_json
from tmg.config.screen import Withheld, screen
from tmg.errors import ConfigError
from tmg.paths import user_config_dir

TRUST_FILE = "trusted.json"


@dataclass(frozen=True)
class ProjectTrust:
    """The decision for one session's project config; fixed for the session (reloads keep it)."""

    folder: Path  # the resolved folder holding the project tmg.yaml
    trusted: bool


Ask = Callable[[Path, list[Withheld]], bool]


def _identity(folder: Path) -> tuple[str, int, int] | None:
    """(real path, device, inode) of an existing folder, else None."""
    real = os.path.realpath(folder)
    try:
        st = os.stat(real)
    except OSError:
        return None
    return (real, st.st_dev, st.st_ino) if os.path.isdir(real) else None


class TrustStore:
    """The user's trusted folders."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_env(cls, env: Mapping[str, str]) -> "TrustStore":
        return cls(user_config_dir(env) / TRUST_FILE)

    def entries(self) -> list[dict[str, Any]]:
        """The stored entries; a missing file is none. Raises ConfigError on a damaged file."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the trust file {self.path} ({exc}); fix or delete it") from exc
        try:
            data = json.loads(text)
            entries = data["folders"]
            if not isinstance(entries, list) or not all(
                isinstance(e, dict) and isinstance(e.get("path"), str) for e in entries
            ):
                raise ValueError
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"the trust file {self.path} is damaged; delete it and run `tmg trust` again") from exc
        return entries

    def is_trusted(self, folder: Path) -> bool:
        """True when ``folder`` (resolved) is stored with the same device and inode.

        A damaged store trusts nothing (the warning about withheld keys still names the fix)."""
        ident = _identity(folder)
        if ident is None:
            return False
        try:
            entries = self.entries()
        except ConfigError:
            return False
        return any(_matches(e, ident) for e in entries)

    def trust(self, folder: Path) -> str:
        """Trust ``folder``; returns its resolved path. Raises ConfigError if it is not a folder."""
        ident = _identity(folder)
        if ident is None:
            raise ConfigError(f"{folder} is not a folder; give the folder that holds the tmg.yaml to trust")
        real, dev, ino = ident
        kept = [e for e in self.entries() if e.get("path") != real]
        kept.append({"path": real, "device": dev, "inode": ino,
                     "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        self._write(kept)
        return real

    def revoke(self, folder: Path) -> str | None:
        """Forget ``folder`` (resolved, or as stored when it is gone); returns the path forgotten."""
        entries = self.entries()
        names = {os.path.realpath(folder), os.path.abspath(folder)}
        kept = [e for e in entries if e.get("path") not in names]
        if len(kept) == len(entries):
            return None
        self._write(kept)
        return next(e["path"] for e in entries if e.get("path") in names)

    def listing(self) -> list[tuple[str, bool]]:
        """(path, still the same folder) for each entry."""
        out = []
        for e in self.entries():
            ident = _identity(Path(e["path"]))
            out.append((e["path"], ident is not None and _matches(e, ident)))
        return out

    def _write(self, entries: list[dict[str, Any]]) -> None:
        write_private_json(self.path, {"version": 1, "folders": entries})


def _matches(entry: Mapping[str, Any], ident: tuple[str, int, int]) -> bool:
    real, dev, ino = ident
    return entry.get("path") == real and entry.get("device") == dev and entry.get("inode") == ino


def decide(folder: Path, raw: Any, env: Mapping[str, str], ask: Ask | None, source: Path,
           user: UserFile | None = None) -> ProjectTrust:
    """Trusted when the store says so; otherwise ``ask`` (the REPL) may trust it now, once, shown
    what would be withheld (``user``: the user's file as this load reads it)."""
    store = TrustStore.for_env(env)
    if store.is_trusted(folder):
        return ProjectTrust(folder, True)
    if ask is not None:
        _, withheld, _ = screen(raw, env, user)
        if withheld and ask(source, withheld):
            store.trust(folder)
            return ProjectTrust(folder, True)
    return ProjectTrust(folder, False)
