"""The fake validates like the real server (zod v3 messages, passthrough, array coercion)."""

from __future__ import annotations

import pytest

from fakeplur.snapshot import load_snapshot
from fakeplur.validation import validate_args

TOOLS = load_snapshot().all_tools


def schema(tool: str) -> dict:
    return TOOLS[tool]["inputSchema"]


def test_missing_required_is_named() -> None:
    v = validate_args(schema("plur_learn"), {"tags": ["a"]})
    assert not v.ok
    p = v.error_payload
    assert p["missing_fields"] == ["statement"] and p["received_fields"] == ["tags"]
    assert p["error"].startswith("Invalid arguments: statement: Required. Received fields: [tags].")
    assert p["drop"] == "partial" and p["_isError"] is True and p["success"] is False


def test_empty_arguments_are_a_whole_payload_drop() -> None:
    p = validate_args(schema("plur_capture"), {}).error_payload
    assert p["drop"] == "whole_payload" and p["missing_fields"] == ["summary"] and p["received_fields"] == []


@pytest.mark.parametrize("args,message", [
    ({"statement": 5}, "statement: Expected string, received number"),
    ({"statement": True}, "statement: Expected string, received boolean"),
    ({"statement": None}, "statement: Expected string, received null"),
    ({"statement": "x", "type": "bogus"},
     "type: Invalid enum value. Expected 'behavioral' | 'terminological' | 'procedural' | 'architectural',"
     " received 'bogus'"),
    ({"statement": "x", "tags": 7}, "tags: Expected array, received number"),
    ({"statement": "x", "tags": ["a", 1]}, "tags.1: Expected string, received number"),
])
def test_wrong_types(args, message) -> None:
    v = validate_args(schema("plur_learn"), args)
    assert not v.ok and v.error_payload["missing_fields"] == []
    assert v.error_payload["error"].startswith(f"Invalid arguments: {message}. ")
    assert "drop" not in v.error_payload


def test_numbers_are_not_coerced_from_strings() -> None:
    v = validate_args(schema("plur_inject_hybrid"), {"task": "x", "budget": "5"})
    assert not v.ok and "budget: Expected number, received string" in v.error_payload["error"]


def test_nested_missing_names_the_top_level_field() -> None:
    p = validate_args(schema("plur_learn_batch"), {"engrams": [{"tags": ["a"]}]}).error_payload
    assert "engrams.0.statement: Required" in p["error"]
    assert p["missing_fields"] == ["engrams"] and "(here: engrams)" in p["error"]


def test_unknown_keys_pass_through() -> None:
    v = validate_args(schema("plur_learn"), {"statement": "x", "agent": "nope"})
    assert v.ok and v.data["agent"] == "nope"


@pytest.mark.parametrize("raw,expected", [("a, b ,,c", ["a", "b", "c"]), ('["x","y"]', ["x", "y"]), ("", [])])
def test_array_strings_are_coerced(raw, expected) -> None:
    v = validate_args(schema("plur_learn"), {"statement": "x", "tags": raw})
    assert v.ok and v.data["tags"] == expected


def test_tool_without_properties_accepts_anything() -> None:
    assert validate_args(schema("plur_status"), {"whatever": 1}).ok
