"""The builders send exactly the keys memory.md §3-§4 name, within the bounds it sets."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from fakeplur.snapshot import load_snapshot
from tmg.memory import payloads

TAGS = ["session:s-1", "mode:chat"]


def closed_schema(tool: str) -> dict[str, Any]:
    """The real (snapshot) schema with unknown keys forbidden, so extra keys fail validation."""
    schema = copy.deepcopy(load_snapshot().all_tools[tool]["inputSchema"])

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node.setdefault("additionalProperties", False)
            for v in node.values():
                close(v)
        elif isinstance(node, list):
            for v in node:
                close(v)

    close(schema)
    return schema


def test_inject_keys() -> None:
    p = payloads.inject_payload("hello", 2000)
    assert p == {"task": "hello", "budget": 2000}
    assert set(payloads.inject_payload("hello", 10, "project:x")) == {"task", "budget", "scope"}
    jsonschema.validate(p, closed_schema("plur_inject_hybrid"))


def test_inject_refuses_an_empty_task() -> None:
    with pytest.raises(ValueError):
        payloads.inject_payload("", 2000)


def test_capture_keys() -> None:
    p = payloads.capture_payload("text", "chat", "s-1")
    assert p == {"summary": "text", "agent": "chat", "session_id": "s-1"}
    jsonschema.validate(p, closed_schema("plur_capture"))


def test_learn_keys_have_no_agent_and_no_session_id() -> None:
    p = payloads.learn_payload("From now on use tabs", TAGS)
    assert p == {"statement": "From now on use tabs", "tags": TAGS}
    assert set(payloads.learn_payload("x y", TAGS, "project:x")) == {"statement", "tags", "scope"}
    jsonschema.validate(p, closed_schema("plur_learn"))


def test_learn_refuses_a_blank_statement() -> None:
    with pytest.raises(ValueError):
        payloads.learn_payload("  ", TAGS)


def test_batch_keys() -> None:
    p = payloads.learn_batch_payload(["one", "two"], TAGS)
    assert set(p) == {"engrams", "max_llm_calls"}
    assert p["max_llm_calls"] == 0
    assert [set(e) for e in p["engrams"]] == [{"statement", "tags"}, {"statement", "tags"}]
    scoped = payloads.learn_batch_payload(["one"], TAGS, "project:x")
    assert list(scoped["engrams"][0]) == ["statement", "scope", "tags"]
    jsonschema.validate(p, closed_schema("plur_learn_batch"))
    jsonschema.validate(scoped, closed_schema("plur_learn_batch"))


def test_batch_is_never_empty() -> None:
    with pytest.raises(payloads.EmptyBatchError):
        payloads.learn_batch_payload([], TAGS)
    with pytest.raises(payloads.EmptyBatchError):
        payloads.learn_batch_payload(["", "  \n"], TAGS)
    assert len(payloads.learn_batch_payload(["", "kept"], TAGS)["engrams"]) == 1


def test_batch_items_are_cut_to_2000_bytes() -> None:
    item = payloads.learn_batch_payload(["é" * 1500], TAGS)["engrams"][0]
    assert len(item["statement"].encode()) == 2000 and item["statement"] == "é" * 1000


def test_session_tags() -> None:
    assert payloads.session_tags("abc", "code") == ["session:abc", "mode:code"]


def test_recall_and_timeline_keys() -> None:
    assert payloads.recall_payload("q") == {"query": "q"}
    assert payloads.recall_payload("q", 5, "project:x") == {"query": "q", "limit": 5, "scope": "project:x"}
    assert payloads.timeline_payload() == {}
    assert payloads.timeline_payload("w", "2026-01-01") == {"search": "w", "since": "2026-01-01"}
    jsonschema.validate(payloads.recall_payload("q", 5, "s"), closed_schema("plur_recall"))


# --- the summary bound and the fit rule -------------------------------------------------------

def test_long_text_is_cut_to_2000_bytes() -> None:
    s = payloads.capture_summary("a" * 5000)
    assert s == "a" * 2000


@pytest.mark.parametrize("char", ["é", "€", "😀"])
@pytest.mark.parametrize("offset", [0, 1, 2, 3])
def test_cut_never_splits_a_character(char: str, offset: int) -> None:
    text = "a" * offset + char * 2000
    s = payloads.capture_summary(text)
    assert len(s.encode()) <= 2000
    assert len(s.encode()) > 2000 - len(char.encode())  # as long as fits
    assert text.startswith(s)
    s.encode().decode()  # valid UTF-8


def test_short_text_is_unchanged() -> None:
    assert payloads.capture_summary("héllo") == "héllo"
    assert payloads.capture_payload("x" * 3000, "a", "s")["summary"] == "x" * 2000


def test_error_with_prompt_that_fits() -> None:
    assert payloads.capture_summary(error="boom", prompt="why?") == "error: boom | user: why?"


def test_error_without_prompt() -> None:
    assert payloads.capture_summary(error="boom") == "error: boom"
    assert payloads.capture_summary(error="boom", prompt="") == "error: boom"


def test_prompt_left_out_when_it_does_not_fit() -> None:
    s = payloads.capture_summary(error="boom", prompt="p" * 1990)
    assert s == "error: boom"


def test_prompt_that_exactly_fits_is_kept() -> None:
    head = "error: boom | user: "
    prompt = "p" * (2000 - len(head))
    assert payloads.capture_summary(error="boom", prompt=prompt) == head + prompt


def test_long_error_is_cut_at_a_character_boundary() -> None:
    s = payloads.capture_summary(error="€" * 1000, prompt="hi")
    assert s.startswith("error: €") and "user:" not in s
    assert len(s.encode()) <= 2000 and len(s.encode()) > 1997


def test_summary_needs_text_or_error() -> None:
    with pytest.raises(ValueError):
        payloads.capture_summary()


def test_batch_items_keep_their_own_tags_and_scope_and_only_the_item_keys() -> None:
    p = payloads.learn_batch_items_payload([
        {"statement": "one", "tags": ["session:a", "mode:x"], "scope": "project:p", "session_id": "a"},
        {"statement": "two", "tags": ["session:b", "mode:y"], "scope": ""},
        {"statement": "   "},
        {"tags": ["no statement"]},
    ])
    assert p == {"engrams": [
        {"statement": "one", "scope": "project:p", "tags": ["session:a", "mode:x"]},
        {"statement": "two", "tags": ["session:b", "mode:y"]},
    ], "max_llm_calls": 0}
    jsonschema.validate(p, closed_schema("plur_learn_batch"))
    with pytest.raises(payloads.EmptyBatchError):
        payloads.learn_batch_items_payload([{"statement": " "}])
