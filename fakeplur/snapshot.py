"""The real server's tools/list, as recorded in `data/plur-tools.json`.

The file is written by `scripts/snapshot-plur-tools` from the pinned real server and compared
with the live one by `tests/contract`; nothing here invents a tool or a schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

SNAPSHOT_PATH = Path(__file__).resolve().parent / "data" / "plur-tools.json"
PROFILES = ("lean", "full")
ADMIN_TOOL = "plur_admin"


@dataclass(frozen=True)
class Snapshot:
    """Tools per profile, plus what the lean profile's gateway derives from them."""

    version: str
    server_name: str
    profiles: dict[str, list[dict[str, Any]]]

    def tools(self, profile: str) -> list[dict[str, Any]]:
        """The tools/list entries of a profile ("lean" or "full")."""
        return self.profiles[profile]

    def by_name(self, profile: str) -> dict[str, dict[str, Any]]:
        return {tool["name"]: tool for tool in self.profiles[profile]}

    @property
    def all_tools(self) -> dict[str, dict[str, Any]]:
        """Every tool, as the full profile lists it (what plur_admin dispatches to)."""
        return self.by_name("full")

    @property
    def core_names(self) -> frozenset[str]:
        """Tools directly callable in every profile (lean's list, minus the gateway)."""
        return frozenset(n for n in self.by_name("lean") if n != ADMIN_TOOL)

    @property
    def admin_actions(self) -> list[str]:
        """What plur_admin dispatches to: every tool that is not core, sorted."""
        return sorted(n for n in self.all_tools if n not in self.core_names)


@lru_cache(maxsize=4)
def load_snapshot(path: Path = SNAPSHOT_PATH) -> Snapshot:
    """Read the snapshot file (cached: it is data shipped with the package)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    profiles = {p: raw["profiles"][p]["tools"] for p in PROFILES}
    return Snapshot(version=raw["version"], server_name=raw["server"]["name"], profiles=profiles)


def resolve_profile(value: str | None) -> str:
    """PLUR_TOOL_PROFILE as the real server reads it: "full" is full, anything else lean."""
    return "full" if value == "full" else "lean"
