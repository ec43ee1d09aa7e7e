"""The fake's knobs, read from its environment once at start."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from fakeplur.snapshot import resolve_profile


@dataclass(frozen=True)
class FakeConfig:
    """FAKE_PLUR_STORE, FAKE_PLUR_SEED, FAKE_PLUR_REJECT, FAKE_PLUR_POISON, FAKE_PLUR_DELAY, FAKE_PLUR_LOG,
    PLUR_TOOL_PROFILE."""

    profile: str = "lean"
    store_path: str | None = None
    seed: str | None = None
    reject: frozenset[str] = frozenset()
    delays: Mapping[str, float] = field(default_factory=dict)
    log_path: str | None = None  # every tools/call appended as a JSON line (tests count calls)
    poison: str | None = None  # a call whose arguments hold this text answers isError (a poisoned write)

    def delay_for(self, tool: str) -> float:
        """Seconds to sleep before answering `tool` (a `*` entry applies to every tool)."""
        return self.delays.get(tool, self.delays.get("*", 0.0))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FakeConfig:
        env = os.environ if env is None else env
        return cls(
            profile=resolve_profile(env.get("PLUR_TOOL_PROFILE")),
            store_path=env.get("FAKE_PLUR_STORE") or None,
            seed=env.get("FAKE_PLUR_SEED") or None,
            reject=frozenset(t.strip() for t in env.get("FAKE_PLUR_REJECT", "").split(",") if t.strip()),
            delays=parse_delays(env.get("FAKE_PLUR_DELAY", "")),
            log_path=env.get("FAKE_PLUR_LOG") or None,
            poison=env.get("FAKE_PLUR_POISON") or None,
        )


def parse_delays(value: str) -> dict[str, float]:
    """`plur_inject_hybrid=2.5,plur_learn=0.1` (or `*=0.2`) -> {tool: seconds}."""
    delays: dict[str, float] = {}
    for part in value.split(","):
        if not part.strip():
            continue
        tool, sep, seconds = part.partition("=")
        if not sep:
            raise ValueError(f"FAKE_PLUR_DELAY: expected tool=seconds, got {part.strip()!r}")
        delays[tool.strip()] = float(seconds)
    return delays
