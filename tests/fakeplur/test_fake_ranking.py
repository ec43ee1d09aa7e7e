"""Inject buckets and selection (the live parity cases are in tests/contract)."""

from __future__ import annotations

from datetime import datetime, timezone

from fakeplur import ranking
from fakeplur.store import Store

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)


def store_with(*items: tuple[str, dict]) -> Store:
    store = Store()
    for statement, ctx in items:
        store.add_engram(statement, ctx, moment=NOW)
    return store


def select(store: Store, task: str, budget: int = 2000, scope: str | None = None) -> dict:
    return ranking.inject_response(ranking.select(store.active_engrams(), task, budget, scope, now=NOW), hybrid=True)


def test_buckets() -> None:
    store = store_with(
        ("The ledger service owns invoices", {"type": "architectural"}),
        ("A sprocket means a pluggable rendering adapter inside the compositor", {"type": "terminological"}),
        ("Always squash ledger commits", {}),
        ("The ledger never writes to disk", {"type": "architectural"}),
    )
    r = select(store, "ledger sprocket")
    ids = [e["id"] for e in store.engrams]
    assert r["directives"] == f"[{ids[0]}] The ledger service owns invoices\n" \
                             "  Commitment: leaning | Confidence: 0.35 | Last active: 2026-06-01"
    assert r["consider"] == f"[{ids[1]}] " + "A sprocket means a pluggable rendering adapter inside the compositor"[:60]
    assert set(r["injected_ids"]) == set(ids) and r["count"] == 4
    assert "squash" not in r["directives"] + r["consider"] and "never" not in r["directives"] + r["consider"]


def test_words_of_three_letters_or_more_and_tags() -> None:
    store = store_with(("Go to bed", {}), ("Prefer short subjects", {"tags": ["git"]}))
    assert select(store, "go to")["injected_ids"] == []
    assert select(store, "bed")["injected_ids"] == [store.engrams[0]["id"]]
    assert select(store, "git")["injected_ids"] == [store.engrams[1]["id"]]


def test_budget_limits_directives_and_the_rest_goes_to_consider() -> None:
    """As the real one: what the budget leaves out fills `consider` (at most 5, 200 tokens)."""
    store = store_with(*[(f"Ledger fact number {i} about invoices", {"type": "architectural"}) for i in range(7)])
    cost = ranking.estimate_tokens(store.engrams[0])
    r = select(store, "ledger", budget=cost * 2)
    assert r["directives"].count("[ENG-") == 2
    assert r["consider"].count("[ENG-") == min(5, 200 // cost)
    assert r["tokens_used"] == cost * (2 + r["consider"].count("[ENG-"))
    assert select(store, "ledger", budget=cost - 1)["directives"] == ""


def test_shared_scope_is_filtered() -> None:
    store = store_with(("Alpha mascots wear hats", {"type": "architectural", "scope": "project:alpha"}),
                       ("Mascots are global", {"type": "architectural"}))
    assert len(select(store, "mascots", scope="project:beta")["injected_ids"]) == 1
    assert len(select(store, "mascots", scope="project:alpha")["injected_ids"]) == 2
    assert len(select(store, "mascots")["injected_ids"]) == 2
