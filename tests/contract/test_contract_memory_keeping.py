"""What tmg's memory keeping relies on, asked of the real server and of fakeplur alike (a fake
that drifts fails here): blank and secret statements refused (alone and per item in a batch,
without isError), pinned engrams selected for an unrelated task with their words left out of the
inject text, `plur_pin` and `plur_forget`."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

pytestmark = pytest.mark.live

_ID = re.compile(r"ENG-\d{4}-\d{2}-\d{2}-\d{3}")
KINDS = ("real", "fake")


def both(servers, tool: str, args: dict[str, Any], profile: str = "full") -> dict[str, Any]:
    return {kind: servers[(kind, profile)].call(tool, args) for kind in KINDS}


def same_shape(data: Any) -> Any:
    """The answer with ids, hashes and timings blanked (two stores mint their own)."""
    text = json.dumps(data, sort_keys=True)
    text = _ID.sub("ENG-ID", text)
    data = json.loads(text)
    if isinstance(data, dict):
        for key in ("content_hash", "quota"):
            data.pop(key, None)
        for row in data.get("results", []) if isinstance(data.get("results"), list) else []:
            if isinstance(row, dict):
                row.pop("dedup", None)
    return data


@pytest.mark.parametrize("statement", ["", "   ", "\n\t", "</statement>", "  <parameter name=\"x\">"])
def test_a_blank_statement_is_refused_the_same_way(servers, statement) -> None:
    answers = both(servers, "plur_learn", {"statement": statement})
    assert answers["real"].is_error and answers["fake"].is_error
    assert answers["fake"].text == answers["real"].text


SECRETS = [
    "my key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    "DB password = hunter2hunter2",
    "AWS AKIAIOSFODNN7EXAMPLE",
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",
    "cache at redis://cache.internal:6379",
    "-----BEGIN RSA PRIVATE KEY----- MIIE",
    "Authorization: Bearer abcdefghijklmnopqrstuvwxyz123",
    "api_key: abcdefghijklmnopqrstuvwxyz",
]


@pytest.mark.parametrize("statement", SECRETS)
def test_a_secret_is_refused_the_same_way(servers, statement) -> None:
    answers = both(servers, "plur_learn", {"statement": statement})
    assert answers["real"].is_error and answers["fake"].is_error, {k: a.text for k, a in answers.items()}
    assert answers["fake"].text == answers["real"].text


def test_a_secret_in_the_tags_is_refused_the_same_way(servers) -> None:
    answers = both(servers, "plur_learn", {"statement": "An ordinary note about tags", "tags": ["sk-live-abcdefghijklmnopqrstuvwx"]})
    assert answers["real"].is_error and answers["fake"].is_error
    assert answers["fake"].text == answers["real"].text


def test_a_batch_refuses_items_one_by_one_without_is_error(servers) -> None:
    engrams = [{"statement": "Batch contract: the good item lands (kq81)."}, {"statement": "   "},
               {"statement": "Batch contract key sk-proj-abcdefghijklmnopqrstuvwxyz0123"},
               {"statement": "</statement>"}, {"statement": "Batch contract: a second good item (kq81)."}]
    answers = both(servers, "plur_learn_batch", {"engrams": engrams, "max_llm_calls": 0})
    shapes = {}
    for kind, outcome in answers.items():
        assert not outcome.is_error, (kind, outcome.text)
        data = outcome.data
        assert [i is not None for i in data["ids"]] == [True, False, False, False, True], kind
        assert [f["index"] for f in data["failures"]] == [1, 2, 3] and data["stats"]["failed"] == 3
        shapes[kind] = same_shape({k: data[k] for k in ("failures", "stats")})
    assert shapes["fake"] == shapes["real"]


@pytest.mark.parametrize("profile", ["lean", "full"])
def test_a_pinned_engram_is_selected_for_an_unrelated_task_its_words_not_in_the_text(servers, profile, transport) -> None:
    """PLUR leaves a behavioral engram's words out of the inject's text; through the broker, the
    real PLUR's read process (tmg/broker/plur_reader.mjs) answers with every selected engram's
    words whole, in `directives`, so no recall has to follow (the fake is not patched)."""
    from tmg.memory.surface import ToolSurface

    marker = f"zq{profile}"
    for kind in KINDS:
        server = servers[(kind, profile)]
        route = ToolSurface.detect(server.tools).route
        pinned = server.call(*route("plur_learn", {"statement": f"From now on, always answer in French {marker}.",
                                                   "pinned": True}))
        plain = server.call(*route("plur_learn", {"statement": f"Never use tabs in YAML files {marker}."}))
        assert pinned.data["pinned"] is True and plain.data["pinned"] is False, kind
        inject = server.call(*route("plur_inject_hybrid", {"task": "write a haiku about the sea", "budget": 2000}))
        assert not inject.is_error, (kind, inject.text)
        assert pinned.data["id"] in inject.data["injected_ids"], (kind, inject.text)
        text = inject.data["directives"] + inject.data["consider"]
        if kind == "real" and transport is not None:  # the broker's read process: every engram in words
            assert f"[{pinned.data['id']}] From now on, always answer in French {marker}." in inject.data["directives"]
            assert "[ENG-" not in inject.data["consider"], (kind, text)  # no line left cut to 60 characters
        else:
            assert "French" not in text, (kind, text)  # a behavioral engram: its words are never in the text
        listed = server.call(*route("plur_pin", {"list": True}))
        assert not listed.is_error, (kind, listed.text)
        assert {"id": pinned.data["id"], "statement": f"From now on, always answer in French {marker}.",
                "scope": "global"}.items() <= next(p for p in listed.data["pinned"] if p["id"] == pinned.data["id"]).items()
        assert set(listed.data) >= {"count", "quota", "pinned"} and set(listed.data["quota"]) == {"tokens", "used", "free", "over"}


def test_pin_unpin_and_forget_answer_alike(servers) -> None:
    shapes: dict[str, list[Any]] = {kind: [] for kind in KINDS}
    for kind in KINDS:
        server = servers[(kind, "full")]
        learned = server.call("plur_learn", {"statement": f"Pin and forget contract note ({kind} wx42)."})
        engram_id = learned.data["id"]
        for tool, args in [("plur_pin", {"id": engram_id}), ("plur_pin", {"id": engram_id, "pinned": False}),
                           ("plur_forget", {"id": engram_id, "reason": "contract"}),
                           ("plur_forget", {"id": engram_id}),
                           ("plur_pin", {"id": "ENG-2099-01-01-999"}), ("plur_forget", {"id": "ENG-2099-01-01-999"}),
                           ("plur_forget", {"search": "zzqqxxnothing"}), ("plur_pin", {}), ("plur_forget", {})]:
            outcome = server.call(tool, args)
            body = outcome.text if outcome.is_error else same_shape(outcome.data)
            shapes[kind].append((tool, outcome.is_error, json.dumps(body).replace(kind, "KIND")))
        recall = server.call("plur_recall", {"query": "contract note wx42"})
        assert engram_id not in [r["id"] for r in recall.data["results"]], kind  # forgotten: not recalled
    assert shapes["fake"] == shapes["real"]


def test_scope_ranks_but_keeps_nothing_out_and_rescope_answers_alike(servers) -> None:
    """What tmg's project scopes rely on (tmg.project): the pinned set and recall say each
    engram's scope; recall asked with a project scope leaves another project's engrams out, but
    inject still selects another project's pinned one (so tmg filters); plur_rescope moves one
    in place, keeping its id, and its refusals read the same."""
    shapes: dict[str, list[Any]] = {kind: [] for kind in KINDS}
    for kind in KINDS:
        server = servers[(kind, "full")]
        mine = server.call("plur_learn", {"statement": f"Scope contract: lint before commits ({kind} sc31).",
                                          "scope": "project:github.com/acme/shop", "pinned": True}).data
        theirs = server.call("plur_learn", {"statement": f"Scope contract: tabs in Go files ({kind} sc31).",
                                            "scope": "project:github.com/acme/other", "pinned": True}).data
        assert mine["scope"] == "project:github.com/acme/shop" and theirs["scope"] == "project:github.com/acme/other"
        inject = server.call("plur_inject_hybrid", {"task": "write a haiku about the sea", "budget": 2000,
                                                    "scope": "project:github.com/acme/shop"}).data
        assert {mine["id"], theirs["id"]} <= set(inject["injected_ids"]), kind
        recall = server.call("plur_recall", {"query": f"scope contract sc31 {kind}",
                                             "scope": "project:github.com/acme/shop"}).data
        found = [r["id"] for r in recall["results"]]
        assert mine["id"] in found and theirs["id"] not in found, kind
        pins = {p["id"]: p["scope"] for p in server.call("plur_pin", {"list": True}).data["pinned"]}
        assert pins[mine["id"]] == "project:github.com/acme/shop", kind
        for args in [{"id": mine["id"], "target_scope": "global"}, {"id": mine["id"], "target_scope": "global"},
                     {"id": mine["id"], "target_scope": "project:github.com/acme/shop"},
                     {"id": "ENG-2099-01-01-999", "target_scope": "global"},
                     {"id": mine["id"], "target_scope": "personal"}]:
            outcome = server.call("plur_rescope", args)
            body = outcome.text if outcome.is_error else same_shape(outcome.data)
            shapes[kind].append((outcome.is_error, json.dumps(body)))
        for engram in (mine, theirs):
            server.call("plur_forget", {"id": engram["id"]})
    assert shapes["fake"] == shapes["real"]


def test_timeline_search_matches_any_of_its_words_case_blind(servers) -> None:
    """`tmg memory search` keeps the episodes holding every word: it relies on plur_timeline
    returning those holding any of them."""
    found = {}
    for kind in KINDS:
        server = servers[(kind, "full")]
        for summary in ("Alphaq7 went well.", "betaq7 was late.", "gammaq7 was not asked for."):
            assert not server.call("plur_capture", {"summary": summary, "agent": "contract"}).is_error
        outcome = server.call("plur_timeline", {"search": "ALPHAQ7 betaq7 deltaq7"})
        found[kind] = sorted(e["summary"] for e in outcome.data["episodes"])
    assert found["fake"] == found["real"] == ["Alphaq7 went well.", "betaq7 was late."]
