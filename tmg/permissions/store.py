"""Decisions the user made at a consent prompt ("yes, always"), kept in a file they can read.

`$XDG_CONFIG_HOME/tmg/permissions.json`, one entry per decision: the rule, allow, the folder it
was made in (it holds there and below, not in every project), and when. Replaced atomically,
0600. `/permissions` and `tmg permissions` list and revoke them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from tmg.config.private_file import write_private_json
from tmg.errors import ConfigError

DECISIONS_FILE = "permissions.json"


@dataclass(frozen=True)
class Saved:
    rule: str
    decision: str
    folder: str
    added: str

    def applies_in(self, cwd: str) -> bool:
        return cwd == self.folder or cwd.startswith(self.folder.rstrip("/") + "/")


class DecisionStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: tuple[tuple[int, ...], list[Saved]] | None = None
        self.generation = 0  # goes up whenever what entries() returns may have changed

    @classmethod
    def for_env(cls, env: Mapping[str, str]) -> "DecisionStore":
        from tmg.paths import user_config_dir

        return cls(user_config_dir(env) / DECISIONS_FILE)

    def entries(self) -> list[Saved]:
        """The saved decisions; a missing file is none. Read again only when the file changed (a
        revoke from another terminal applies at the next tool call)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            if self._cache is not None:
                self._cache = None
                self.generation += 1
            return []
        except OSError as exc:
            raise ConfigError(f"cannot read {self.path} ({exc}); fix or delete it") from exc
        stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)  # replaced whole: a new inode
        if self._cache is not None and self._cache[0] == stamp:
            return self._cache[1]
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            entries = [Saved(str(e["rule"]), str(e.get("decision", "allow")), str(e["folder"]), str(e.get("added", "")))
                       for e in data["decisions"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"the permissions file {self.path} is damaged ({exc}); fix or delete it") from exc
        self._cache = (stamp, entries)
        self.generation += 1
        return entries

    def add(self, rule: str, folder: str, decision: str = "allow") -> Saved:
        saved = Saved(rule, decision, folder, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        kept = [e for e in self.entries() if (e.rule, e.folder) != (rule, folder)]
        self._write([*kept, saved])
        return saved

    def revoke(self, which: str) -> list[Saved]:
        """Forget the entry numbered `which` (1-based, as listed) or every entry whose rule is
        `which`; returns what was forgotten."""
        entries = self.entries()
        if which.isdigit() and 1 <= int(which) <= len(entries):
            gone = [entries[int(which) - 1]]
        else:
            gone = [e for e in entries if e.rule == which.strip()]
        if gone:
            self._write([e for e in entries if e not in gone])
        return gone

    def listing(self) -> list[str]:
        """The entries as numbered lines (the numbers `revoke` takes), or one line saying there are none."""
        entries = self.entries()
        if not entries:
            return [f"no saved permission decisions ({self.path})"]
        return [f"saved decisions ({self.path}):"] + [
            f"  {i}. {e.decision} {e.rule}  (in {e.folder} and below, since {e.added})" for i, e in enumerate(entries, 1)]

    def revoke_line(self, which: str) -> str:
        """`revoke`, said in one line (what was forgotten, or that nothing matched and how to look)."""
        gone = self.revoke(which)
        if not gone:
            raise ConfigError(f"no saved decision {which!r} (list them with tmg permissions, or /permissions)")
        return "revoked: " + "; ".join(f"{e.decision} {e.rule} (in {e.folder})" for e in gone)

    def _write(self, entries: list[Saved]) -> None:
        write_private_json(self.path, {"version": 1, "decisions": [
            {"rule": e.rule, "decision": e.decision, "folder": e.folder, "added": e.added} for e in entries]})
        self._cache = None
        self.generation += 1
