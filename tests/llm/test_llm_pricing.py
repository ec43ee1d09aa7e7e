"""Prices from litellm's bundled JSON map, without importing litellm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tmg.llm import pricing


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pricing, "_entries", {})
    monkeypatch.setattr(pricing, "_whole", None)


def test_price_lookup_by_litellm_id_and_bare_name() -> None:
    entry = json.loads(pricing.price_map_path().read_text())["gpt-4o-mini"]  # type: ignore[union-attr]
    expected = 1000 * entry["input_cost_per_token"] + 100 * entry["output_cost_per_token"]
    assert pricing.cost("openai/gpt-4o-mini", 1000, 100) == pytest.approx(expected)
    assert pricing.cost("gpt-4o-mini", 1000, 100) == pytest.approx(expected)
    assert pricing.cost("openai/no-such-model-xyz", 10, 10) is None
    assert pricing.cost("anthropic/gpt-4o-mini", 10, 10) is None  # another provider's name clash


def test_targeted_parse_agrees_with_a_full_parse() -> None:
    """The fast path relies on the file's layout; check it on this litellm's file, entry by entry."""
    raw = pricing.price_map_path().read_bytes()  # type: ignore[union-attr]
    full = json.loads(raw)
    keys = list(full)[::25] + ["gpt-4o-mini", list(full)[0], list(full)[-1]]
    for key in keys:
        assert pricing._find(raw, key) == (full[key] if isinstance(full[key], dict) else None), key


def test_another_layout_falls_back_to_a_full_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   fresh_cache: None) -> None:
    compact = tmp_path / "prices.json"
    compact.write_text(json.dumps({"m1": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}))
    monkeypatch.setattr(pricing, "price_map_path", lambda: compact)
    assert pricing.cost("m1", 100, 10) == pytest.approx(1.2e-4)
    assert pricing.cost("m2", 100, 10) is None


def test_missing_or_broken_map_means_no_price(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              fresh_cache: None) -> None:
    monkeypatch.setattr(pricing, "price_map_path", lambda: None)
    assert pricing.cost("openai/gpt-4o-mini", 100, 10) is None
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    monkeypatch.setattr(pricing, "price_map_path", lambda: broken)
    monkeypatch.setattr(pricing, "_entries", {})
    assert pricing.cost("gpt-4o-mini", 100, 10) is None
