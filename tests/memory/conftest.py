"""Memory unit tests use the doubles in tests/support/doubles.py (no server processes), except
the runtime tests, which start `python -m fakeplur` the way tmg starts a memory server."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tmg.config.model import Config, MemoryConfig


class LiveConfig:
    """A config that tests change between turns, as a hot reload would."""

    def __init__(self, **memory: Any) -> None:
        # LEARN batch unless a test says otherwise: most tests here are about the batch machinery
        # (ring, spool, flush); the shipped tier (full) has tests of its own.
        self.config = Config(memory=MemoryConfig(**{"enabled": True, "learn": "batch", **memory}))

    def __call__(self) -> Config:
        return self.config

    def set(self, **memory: Any) -> None:
        self.config = replace(self.config, memory=replace(self.config.memory, **memory))


@pytest.fixture
def live() -> LiveConfig:
    return LiveConfig()
