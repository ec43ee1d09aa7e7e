"""The phases a turn passes through."""

from __future__ import annotations

import enum


class Phase(enum.Enum):
    IDLE = "idle"
    GUARD = "guard"
    REFINING = "refining"
    INFERENCE = "inference"
    EXECUTING = "executing"
    PERSISTING = "persisting"
    RECOVERING = "recovering"
