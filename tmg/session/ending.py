"""The single session end: one ordered list of steps, run exactly once however the session ends.

Memory plugs its flush and write-failure notice in here; resources close here. A failing step
is reported and the next step still runs.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable


class SessionEnd:
    def __init__(self, report: Callable[[str], None] = lambda _m: None) -> None:
        self._steps: list[tuple[str, Callable[[], Any]]] = []
        self._report = report
        self.ran = False

    def add(self, name: str, step: Callable[[], Any]) -> None:
        """Register a step (sync or async). Steps run in the order they were added."""
        self._steps.append((name, step))

    async def run(self) -> None:
        if self.ran:
            return
        self.ran = True
        for name, step in self._steps:
            try:
                result = step()
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:  # the remaining steps (closing files, locks) must still run
                try:
                    self._report(f"while ending the session, {name} failed: {exc}")
                except (OSError, ValueError):
                    pass  # the terminal is gone (SIGHUP): the report cannot be shown, go on
