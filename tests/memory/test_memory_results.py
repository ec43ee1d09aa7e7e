"""Parsing real server answers (texts recorded from @plur-ai/mcp 0.20.0) into typed values."""

from __future__ import annotations

import json

import pytest

from tmg.memory import results

INJECT = {
    "directives": "[ENG-2026-11-30-002] The service layer talks to postgres via the repository module\n"
                  "  Commitment: leaning | Confidence: 0.35 | Last active: 2026-11-30",
    "consider": "[ENG-2026-11-30-003] A widget means a reusable dashboard component rendered in th",
    "count": 3, "tokens_used": 113,
    "injected_ids": ["ENG-2026-11-30-002", "ENG-2026-11-30-001", "ENG-2026-11-30-003"], "mode": "hybrid",
}


def test_inject_buckets_and_ids_without_text() -> None:
    r = results.parse_inject(INJECT)
    assert r.directives == (results.InjectLine("ENG-2026-11-30-002",
                                               "The service layer talks to postgres via the repository module"),)
    assert r.consider[0].id == "ENG-2026-11-30-003" and len(r.consider[0].text) == 60
    assert r.ids_without_text == ("ENG-2026-11-30-001",)
    assert r.count == 3 and r.tokens_used == 113


def test_empty_inject() -> None:
    r = results.parse_inject({"directives": "", "consider": "", "count": 0, "tokens_used": 0,
                              "injected_ids": [], "mode": "hybrid"})
    assert r.injected_ids == () and r.ids_without_text == ()


@pytest.mark.parametrize("bad", [None, [], {"directives": ""}, {"injected_ids": [1]},
                                 {"injected_ids": [], "directives": 5}])
def test_bad_inject_shapes_raise(bad) -> None:
    with pytest.raises(results.ResultError):
        results.parse_inject(bad)


@pytest.mark.parametrize("key,bad", [("count", "many"), ("count", [3]), ("count", {"n": 3}), ("count", True),
                                     ("tokens_used", "113 tokens"), ("tokens_used", float("inf")),
                                     ("tokens_used", "nan")])
def test_malformed_counts_are_a_bad_result_not_a_crash(key, bad) -> None:
    with pytest.raises(results.ResultError, match=key):
        results.parse_inject({**INJECT, key: bad})


def test_counts_as_numeric_text_or_missing_are_read() -> None:
    r = results.parse_inject({**INJECT, "count": "3", "tokens_used": 113.0})
    assert (r.count, r.tokens_used) == (3, 113)
    r = results.parse_inject({k: v for k, v in INJECT.items() if k not in ("count", "tokens_used")})
    assert (r.count, r.tokens_used) == (3, 0)


def test_learn_and_batch() -> None:
    assert results.parse_learn({"id": "ENG-2026-11-30-001", "decision": "ADD"}) == "ENG-2026-11-30-001"
    b = results.parse_learn_batch({"ids": ["ENG-1", None], "results": [], "stats": {},
                                   "failures": [{"index": 1, "error": "x"}], "warning": "1 of 2"})
    assert b.ids == ("ENG-1", None) and b.failures[0]["index"] == 1 and b.warning == "1 of 2"
    with pytest.raises(results.ResultError):
        results.parse_learn({"decision": "ADD"})


def test_recall_capture_timeline_status() -> None:
    rows = results.parse_recall({"results": [{"id": "ENG-1", "statement": "Full words", "type": "behavioral",
                                              "scope": "global"}], "count": 1, "mode": "bm25-only"})
    assert rows == [results.Engram("ENG-1", "Full words", "behavioral", "global")]
    ep = results.parse_capture({"id": "EP-1-abcd", "summary": "s", "timestamp": "t"})
    assert ep.id == "EP-1-abcd"
    tl = results.parse_timeline({"episodes": [{"id": "EP-1-abcd", "summary": "s", "agent": "chat"}], "count": 1})
    assert tl[0].agent == "chat"
    st = results.parse_status({"engram_count": 3, "episode_count": 1})
    assert (st.engram_count, st.episode_count) == (3, 1)


def test_errors() -> None:
    text = json.dumps({"error": "Invalid arguments: summary: Required.", "success": False,
                       "received_fields": ["agent"], "missing_fields": ["summary"]})
    e = results.parse_error(json.loads(text), text)
    assert e.missing_fields == ("summary",) and e.received_fields == ("agent",)
    assert results.parse_error(None, "plain failure\n").message == "plain failure"
