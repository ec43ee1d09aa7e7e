"""One key of the config schema (tmg.config.schema): its type, default, bounds and how it is shown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Key:
    """One key of the schema. ``kind`` is str, url, int, number, bool, str_list, str_map, choice,
    block (a nested schema), blocks (a map of names to nested schemas) or hooks (HOOKS, checked
    by tmg.config.hook_schema)."""

    kind: str
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None  # past any real use: a typo'd exponent, not a setting
    choices: tuple[str, ...] = ()
    fields: dict[str, "Key"] = field(default_factory=dict)
    hot: bool = True
    secret: bool = False
    required: bool = False
    pattern: str = ""  # a regex a str value must match in full
    example: str = ""  # shown in type errors: "(e.g. MAX_TURNS: 200)"


DAY = 86_400.0  # seconds: the longest timeout that is still a timeout
