"""`WriteReport`: did this session's memory writes land? (memory.md §5-§6)

Fed by `PlurClient(on_result=report.record)`, so every call is counted where it is judged: a
write has failed when it raised, timed out, answered `isError`, was unreachable, or answered
something that is not the tool's result. Recall for the injector (inject, and the recall that
resolves ids to words) is counted apart and never marks a write tool dead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tmg.memory.client import CallResult
from tmg.memory.results import BatchResult

WRITE_TOOLS = frozenset({"plur_capture", "plur_learn", "plur_learn_batch"})
INJECTION_TOOLS = frozenset({"plur_inject_hybrid", "plur_recall"})


@dataclass
class Tally:
    """Attempts and failures of one tool (or of injection) in this session."""

    attempts: int = 0
    failures: int = 0
    item_failures: int = 0  # batch items the server refused one by one inside a call that landed
    last_error: str | None = None

    @property
    def dead(self) -> bool:
        """Every attempt failed: the tool is not working at all (one success means transients)."""
        return self.attempts >= 1 and self.failures == self.attempts

    def add(self, result: CallResult[Any]) -> None:
        self.attempts += 1
        if not result.ok:
            self.failures += 1
            self.last_error = result.error
        elif isinstance(result.value, BatchResult) and result.value.failures:
            # No isError, yet these items were not written (a blank statement, a detected secret).
            self.item_failures += len(result.value.failures)
            first = result.value.failures[0]
            self.last_error = f"{result.tool}: item refused: {first.get('error', 'no reason given')}"


class WriteReport:
    """Per session, per write tool: attempts and failures; injection failures apart."""

    def __init__(self) -> None:
        self.writes: dict[str, Tally] = {}
        self.injection = Tally()
        self.start_failure: str | None = None  # e.g. the server never finished starting
        self.handed = 0  # writes still in flight at the session end, left to the broker to land

    @property
    def wrote(self) -> bool:
        """This session wrote to memory: a write landed, or the broker took one to land."""
        return self.handed > 0 or any(t.attempts > t.failures for t in self.writes.values())

    def record(self, result: CallResult[Any]) -> None:
        """Count one call (the `on_result` hook of PlurClient). Other reads are not counted."""
        if result.tool in WRITE_TOOLS:
            self.writes.setdefault(result.tool, Tally()).add(result)
        elif result.tool in INJECTION_TOOLS:
            self.injection.add(result)

    @property
    def failed_writes(self) -> int:
        """N of the notice: write calls that failed, plus batch items the server refused one by
        one, all write tools together."""
        return sum(t.failures + t.item_failures for t in self.writes.values())

    def dead_tools(self) -> list[str]:
        """Write tools whose every attempt failed this session, sorted."""
        return sorted(tool for tool, tally in self.writes.items() if tally.dead)

    def notice(self) -> str | None:
        """The session-end line, or None when no write failed (memory.md §6).

        `memory write failures: <N>` then one `; <tool> failing — learning is disabled` clause
        per dead tool, sorted, then the start failure if any. N counts failed write calls (a batch
        of 20 engrams is one call) and batch items the server refused one by one.
        """
        if self.failed_writes == 0 and self.start_failure is None:
            return None
        clauses = [f"memory write failures: {self.failed_writes}"]
        clauses += [f"{tool} failing — learning is disabled" for tool in self.dead_tools()]
        if self.start_failure is not None:
            clauses.append(self.start_failure)
        return "; ".join(clauses)

    def lines(self) -> list[str]:
        """Write health for `/memory`: one line per tool used, then injection."""
        out = []
        for tool in sorted(self.writes):
            t = self.writes[tool]
            state = " (failing: learning through it is disabled)" if t.dead else ""
            last = f"; last error: {t.last_error}" if (t.failures or t.item_failures) and t.last_error else ""
            items = f", {t.item_failures} item(s) refused" if t.item_failures else ""
            out.append(f"{tool}: {t.attempts} attempt(s), {t.failures} failed{items}{state}{last}")
        if self.injection.attempts:
            i = self.injection
            last = f"; last error: {i.last_error}" if i.failures and i.last_error else ""
            out.append(f"recall for injection: {i.failures} failed of {i.attempts}{last}")
        return out or ["writes: none yet this session"]
