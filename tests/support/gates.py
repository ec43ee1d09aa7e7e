"""A permission gate for tests about something else than permissions (a registry without one
refuses every call: tmg.tools.registry)."""

from __future__ import annotations

from tmg.permissions.action import ToolAction, Verdict


class AllowEverything:
    """Every call allowed, and each one kept (a test may check what was judged)."""

    def __init__(self) -> None:
        self.seen: list[ToolAction] = []

    async def check(self, action: ToolAction) -> Verdict:
        self.seen.append(action)
        return Verdict(True, "allowed by the test")


ALLOW = AllowEverything()
