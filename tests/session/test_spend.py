"""The spend caps (MAX_COST): a session's spend from its history and this run, the day's across every
tmg of one TMG_HOME, checked before each call, the crossing call completing."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tmg.llm.gateway import Completion, CompletionRequest, ProviderSpec, Usage
from tmg.errors import BudgetLimitError
from tmg.session.spend import CappedGateway, CostCap, DayLedger, check_cap, spent_in, usd


def test_check_cap_is_the_one_check_of_a_cap():
    check_cap(0.5, None, "x", "K", "fix")  # no cap
    check_cap(0.49, 0.5, "x", "K", "fix")
    with pytest.raises(BudgetLimitError, match=r"^this prompt's calls have cost \$0.50, reaching --max-budget-usd "
                                            r"\(\$0.50\): no more model calls; raise it$"):
        check_cap(0.5, 0.5, "this prompt's calls", "--max-budget-usd", "raise it")
    assert (usd(12.345), usd(0.01), usd(0.0003), usd(0.0), usd(1e-7)) == ("$12.35", "$0.01", "$0.0003", "$0", "$0.0000001")


def test_a_sessions_stored_spend_counts_priced_answers_and_summaries():
    stored = [{"role": "user", "content": "q"},
              {"role": "assistant", "meta": {"usage": {"in": 1, "out": 1, "cost": 0.25}}},
              {"role": "assistant", "meta": {"usage": {"in": None, "out": None, "cost": None}}},
              {"role": "summary", "meta": {"usage": {"cost": 0.5}}},
              {"role": "tool", "meta": {"usage": {"cost": 9}}}]
    assert spent_in(stored) == 0.75


def test_the_day_ledger_sums_every_writer_and_reads_only_what_is_new(tmp_path):
    day = ["2026-01-01"]
    mine, theirs = DayLedger(tmp_path, lambda: day[0]), DayLedger(tmp_path, lambda: day[0])
    mine.add(0.25, "s1", "m")
    theirs.add(0.5, "s2", "m")
    assert mine.total() == 0.75
    with open(tmp_path / "2026-01-01.jsonl", "a") as f:
        f.write('{"cost": 1.0')  # a line being written: counted once it is whole
    assert mine.total() == 0.75
    with open(tmp_path / "2026-01-01.jsonl", "a") as f:
        f.write('}\nnot json\n')
    assert mine.total() == 1.75
    day[0] = "2026-01-02"  # a new day starts from nothing
    assert mine.total() == 0.0
    assert oct((tmp_path / "2026-01-01.jsonl").stat().st_mode & 0o777) == "0o600"


def test_concurrent_writers_never_interleave_lines(tmp_path):
    ledgers = [DayLedger(tmp_path, lambda: "d") for _ in range(4)]
    threads = [threading.Thread(target=lambda l=l: [l.add(0.001, "s", "m") for _ in range(200)]) for l in ledgers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert DayLedger(tmp_path, lambda: "d").total() == pytest.approx(0.8)


class Priced:
    def __init__(self, cost):
        self.cost, self.calls = cost, 0

    async def complete(self, request, on_text):
        self.calls += 1
        return Completion("ok", [], Usage(10, 5, self.cost))

    async def aclose(self):
        pass


def test_a_capped_gateway_checks_first_and_counts_after(tmp_path):
    caps = [(0.3, None)]
    said: list[str] = []
    cap = CostCap(lambda: caps[0], DayLedger(tmp_path, lambda: "d"), "s1", session_spent=0.1, notice=said.append)
    inner = Priced(0.25)
    gateway = CappedGateway(inner, cap)
    request = CompletionRequest(ProviderSpec("p", "openai/gpt-4o-mini"), [])
    asyncio.run(gateway.complete(request, print))  # 0.10 spent: under the cap, the call goes
    assert cap.session_spent == pytest.approx(0.35)
    with pytest.raises(BudgetLimitError, match="this session's model calls have cost \\$0.35, reaching MAX_COST.SESSION"):
        asyncio.run(gateway.complete(request, print))
    assert inner.calls == 1
    caps[0] = (None, 0.2)  # a reload: the day's cap now
    with pytest.raises(BudgetLimitError, match="today's model calls have cost \\$0.25, reaching MAX_COST.DAY"):
        asyncio.run(gateway.complete(request, print))
    unpriced = CappedGateway(Priced(None), cap)
    caps[0] = (10.0, None)
    asyncio.run(unpriced.complete(request, print))
    asyncio.run(unpriced.complete(request, print))
    assert said == ["MAX_COST cannot count the calls of openai/gpt-4o-mini: their price is unknown (the model is "
                    "not in the price map, or the provider reported no usage)"]
