"""The live config: one immutable Config at a time, swapped atomically on reload.

Readers call :meth:`LiveConfig.get` at phase boundaries; command-line overrides (``--mode``,
``--max-turns``, ``--max-budget-usd``) are applied to every config swapped in, so a reload never undoes them.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from tmg.config.model import Config


class LiveConfig:
    def __init__(self, config: Config, **overrides: Any) -> None:
        self._overrides = {k: v for k, v in overrides.items() if v is not None}
        self._lock = threading.Lock()
        self._config = self._apply(config)
        self.warnings: tuple[str, ...] = ()  # what loading said, so a reload does not repeat it

    def _apply(self, config: Config) -> Config:
        if not self._overrides:
            return config
        origins = dict(config.origins)
        origins.update({name.upper(): f"--{name.replace('_', '-')}" for name in self._overrides})
        return replace(config, **self._overrides, origins=origins)

    @property
    def overrides(self) -> frozenset[str]:
        """Key paths set on the command line (``MODE`` for ``--mode``): a file change to them is moot."""
        return frozenset(name.upper() for name in self._overrides)

    def get(self) -> Config:
        return self._config  # a single reference read: atomic, no lock needed

    def swap(self, config: Config) -> Config:
        """Install a new validated config; returns the previous one."""
        with self._lock:
            old, self._config = self._config, self._apply(config)
        return old
