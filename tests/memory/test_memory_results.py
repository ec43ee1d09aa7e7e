"""Parsing real server answers into typed values: the replies recorded from the pinned
@plur-ai/mcp (tests/data/plur_replies: how they were recorded, and how to record them again)."""

from __future__ import annotations

import json

import pytest

from tests.data.plur_replies.record import ARCHITECTURAL, BEHAVIORAL, TERMINOLOGICAL, load
from tmg.memory import results

REPLIES = load()


def reply(name: str):
    """A recorded reply's text as the client reads it (JSON)."""
    return json.loads(REPLIES[name]["text"])


def _id(name: str) -> str:
    return reply(name)["id"]


INJECT = reply("inject")


def test_inject_buckets_and_ids_without_text() -> None:
    r = results.parse_inject(INJECT)
    assert r.directives == (results.InjectLine(_id("learn_architectural"), ARCHITECTURAL),)
    assert r.consider[0].id == _id("learn_terminological") and len(r.consider[0].text) == 60
    assert TERMINOLOGICAL.startswith(r.consider[0].text)  # the server cuts it
    # The behavioral engram is selected but its words are in neither bucket (the injection gotcha).
    assert r.ids_without_text == (_id("learn_behavioral"),) and BEHAVIORAL not in REPLIES["inject"]["text"]
    assert r.count == 3 and r.tokens_used == INJECT["tokens_used"] > 0


def test_empty_inject() -> None:
    r = results.parse_inject(reply("inject_empty"))
    assert r.injected_ids == () and r.ids_without_text == () and r.count == 0


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
    r = results.parse_inject({**INJECT, "count": "3", "tokens_used": float(INJECT["tokens_used"])})
    assert (r.count, r.tokens_used) == (3, INJECT["tokens_used"])
    r = results.parse_inject({k: v for k, v in INJECT.items() if k not in ("count", "tokens_used")})
    assert (r.count, r.tokens_used) == (3, 0)


def test_learn_and_batch() -> None:
    assert results.parse_learn(reply("learn_architectural")).startswith("ENG-")
    b = results.parse_learn_batch(reply("learn_batch_one_blank"))
    assert b.ids[0].startswith("ENG-") and b.ids[1] is None  # the blank one failed, without isError
    assert not REPLIES["learn_batch_one_blank"]["is_error"]
    assert b.failures[0]["index"] == 1 and b.warning.startswith("1 of 2")
    with pytest.raises(results.ResultError):
        results.parse_learn({"decision": "ADD"})


def test_recall_capture_timeline_status() -> None:
    rows = results.parse_recall(reply("recall"))
    assert rows == [results.Engram(_id("learn_architectural"), ARCHITECTURAL, "architectural", "global")]
    ep = results.parse_capture(reply("capture"))
    assert ep.id == _id("capture") and ep.id.startswith("EP-")
    tl = results.parse_timeline(reply("timeline"))
    assert [(e.id, e.agent) for e in tl] == [(ep.id, "chat")]
    st = results.parse_status(reply("status"))
    assert (st.engram_count, st.episode_count) == (4, 1)  # three learned, one of the batch; one captured


def test_errors() -> None:
    recorded = REPLIES["capture_missing_summary"]
    assert recorded["is_error"]
    e = results.parse_error(json.loads(recorded["text"]), recorded["text"])
    assert e.missing_fields == ("summary",) and e.received_fields == ("agent",)
    assert e.message.startswith("Invalid arguments: summary: Required.")
    learn = REPLIES["learn_missing_statement"]
    assert results.parse_error(json.loads(learn["text"]), learn["text"]).missing_fields == ("statement",)
    assert results.parse_error(None, "plain failure\n").message == "plain failure"
