"""MAX_COST (issue 25 item 8): a spend cap per session and per day, from the cost meter, checked
before each model call; reached, the prompt stops with one line and exit 1."""

from __future__ import annotations

import json

import pytest

from e2e.mock_llm import Text

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

PRICED = "openai/gpt-4o-mini"  # in litellm's price map: its calls have a cost


def priced_config(tmg, caps: str) -> None:
    tmg.config.write_text(f"PROVIDERS:\n  mock:\n    MODEL: {PRICED}\n    API_KEY: ${{MOCK_API_KEY}}\n"
                          f"    URL: {tmg.llm.url}\nMAX_COST:\n{caps}")


def test_the_session_cap_stops_the_next_prompt_once_reached(tmg, llm):
    priced_config(tmg, "  SESSION: 0.0000001\n")
    llm.enqueue(Text("The first answer costs a little."))
    first = tmg.run("-r", "hello")
    assert first.code == 0, first.err  # the call that crosses the cap completes: its cost is known after it
    second = tmg.run("-r", "and again")
    assert second.code == 1 and second.out == ""
    (line,) = second.err.splitlines()
    assert line.startswith("tmg: error: this session's model calls have cost $0.0")
    assert "reaching MAX_COST.SESSION ($0.0000001): no more model calls; raise MAX_COST.SESSION" in line
    assert len(llm.requests) == 1  # the second prompt never reached the provider
    assert tmg.run("--new", "-r", "a new session").code == 0  # the cap is per session


def test_the_day_cap_holds_across_sessions(tmg, llm):
    priced_config(tmg, "  DAY: 0.0000001\n")
    assert tmg.run("-r", "hello").code == 0
    ledger = list((tmg.home / "spend").glob("*.jsonl"))
    (entry,) = [json.loads(line) for line in ledger[0].read_text().splitlines()]
    assert entry["cost"] > 0 and entry["model"] == PRICED
    other = tmg.run("--new", "-r", "in another session")
    assert other.code == 1 and "today's model calls have cost" in other.err and "MAX_COST.DAY" in other.err
    assert len(llm.requests) == 1


def test_an_unpriced_model_says_the_cap_cannot_count_it(tmg, llm):
    tmg.write_config("MAX_COST:\n  SESSION: 0.01\n")  # openai/mock-model has no price
    r = tmg.run("-r", "hello")
    assert r.code == 0, r.err
    assert "MAX_COST cannot count the calls of openai/mock-model: their price is unknown" in r.err
