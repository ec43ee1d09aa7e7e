"""What model calls cost, against the caps a user set: MAX_COST.SESSION and MAX_COST.DAY (USD).

Costs are the cost meter's (tmg.llm.pricing, per call, as the history stores them). A session's
spend is what its stored turns cost (every run of it) plus this run's calls; the day's is the
ledger of every tmg under one TMG_HOME: ``spend/YYYY-MM-DD.jsonl``, one line per priced call,
appended (O(1)) and summed from where the last look stopped. A cap is checked before each model
call: the call that crosses it completes (its cost is known only after it), the next one is refused
with one line, and the prompt stops with exit 1.

``check_cap`` is the one check of a spend cap: the cap on one prompt (MAX_BUDGET_USD,
``--max-budget-usd``, tmg.engine.limits) uses it too, and all three raise BudgetLimitError.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from tmg.errors import BudgetLimitError
from tmg.llm.gateway import Completion, CompletionRequest, DeltaSink, ModelGateway, Usage
from tmg.private_files import FILE_MODE, private_dirs

Limits = Callable[[], "tuple[float | None, float | None]"]  # (MAX_COST.SESSION, MAX_COST.DAY) now


def check_cap(spent: float, cap: float | None, what: str, key: str, fix: str) -> None:
    """Raise BudgetLimitError when ``spent`` USD has reached ``cap`` (None: no cap).

    ``what`` says whose spend it is ("this session's model calls"), ``key`` the setting ("MAX_COST.SESSION",
    "--max-budget-usd"), ``fix`` what the user can do about it."""
    if cap is not None and spent >= cap:
        raise BudgetLimitError(f"{what} have cost {usd(spent)}, reaching {key} ({usd(cap)}): no more model calls; {fix}")


def usd(value: float) -> str:
    """Dollars for a person: cents from a cent up, else the digits that are there ($0.0003)."""
    return f"${value:,.2f}" if value >= 0.01 else "$" + (f"{value:.8f}".rstrip("0").rstrip(".") or "0")


def spent_in(messages: Iterable[dict[str, Any]]) -> float:
    """What a stored history's model calls cost (the unpriced ones count nothing)."""
    total = 0.0
    for message in messages:
        if message.get("role") in ("assistant", "summary"):
            usage = (message.get("meta") or {}).get("usage")
            cost = usage.get("cost") if isinstance(usage, dict) else None
            if isinstance(cost, (int, float)):
                total += float(cost)
    return total


class DayLedger:
    """Today's spend across every tmg of one TMG_HOME."""

    def __init__(self, folder: Path, today: Callable[[], str] = lambda: time.strftime("%Y-%m-%d")) -> None:
        self.folder = folder
        self._today = today
        self._path: Path | None = None
        self._offset = 0  # bytes of the day's file already summed
        self._total = 0.0

    def _file(self) -> Path:
        path = self.folder / f"{self._today()}.jsonl"
        if path != self._path:  # a new day: a new file, from nothing
            self._path, self._offset, self._total = path, 0, 0.0
        return path

    def total(self) -> float:
        """USD spent today, the other processes' calls included."""
        path = self._file()
        try:
            with open(path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return self._total
        whole = data[: data.rfind(b"\n") + 1]  # a line being written is summed next time
        self._offset += len(whole)
        for line in whole.splitlines():
            try:
                cost = json.loads(line).get("cost")
            except (ValueError, AttributeError):
                continue
            if isinstance(cost, (int, float)):
                self._total += float(cost)
        return self._total

    def add(self, cost: float, session_id: str, model: str) -> None:
        path = self._file()
        private_dirs(self.folder)
        line = json.dumps({"ts": round(time.time(), 3), "cost": cost, "session": session_id, "model": model})
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        try:
            os.write(fd, (line + "\n").encode())  # one write: lines of two processes never interleave
        finally:
            os.close(fd)


class CostCap:
    """The spend of one session and of the day, checked before each of the session's model calls."""

    def __init__(self, limits: Limits, ledger: DayLedger | None, session_id: str, session_spent: float = 0.0,
                 notice: Callable[[str], None] = lambda _t: None) -> None:
        self._limits = limits
        self._ledger = ledger
        self._session_id = session_id
        self.session_spent = session_spent
        self._notice = notice
        self._unpriced_said: set[str] = set()

    def check(self) -> None:
        """Raise BudgetLimitError when the session or the day has reached its cap."""
        session_cap, day_cap = self._limits()
        check_cap(self.session_spent, session_cap, "this session's model calls", "MAX_COST.SESSION",
                  "raise MAX_COST.SESSION in the config, or start a new session (--new, /new)")
        if day_cap is not None and self._ledger is not None:
            check_cap(self._ledger.total(), day_cap, "today's model calls", "MAX_COST.DAY",
                      "raise MAX_COST.DAY in the config, or wait until tomorrow")

    def record(self, usage: Usage, model: str) -> None:
        """One call's cost: the session's and the day's (a call without a price counts nothing,
        said once per model while a cap is set)."""
        if usage.cost is None:
            if any(cap is not None for cap in self._limits()) and model not in self._unpriced_said:
                self._unpriced_said.add(model)
                self._notice(f"MAX_COST cannot count the calls of {model}: their price is unknown (the model is not "
                             "in the price map, or the provider reported no usage)")
            return
        self.session_spent += usage.cost
        if self._ledger is not None and usage.cost > 0:
            self._ledger.add(usage.cost, self._session_id, model)


class CappedGateway:
    """A gateway whose calls are checked against the caps first and counted after."""

    def __init__(self, inner: ModelGateway, cap: CostCap) -> None:
        self._inner = inner
        self._cap = cap

    async def complete(self, request: CompletionRequest, on_text: DeltaSink) -> Completion:
        self._cap.check()
        completion = await self._inner.complete(request, on_text)
        self._cap.record(completion.usage, request.provider.model)
        return completion

    async def aclose(self) -> None:
        await self._inner.aclose()
