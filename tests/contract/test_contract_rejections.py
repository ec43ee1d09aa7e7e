"""Missing required fields are rejected by the real server and by the fake, naming the same fields.

The whole error text is compared too: the fake reproduces the real envelope byte for byte.
"""

from __future__ import annotations

import pytest

from tmg.memory.results import parse_error
from tmg.memory.surface import ToolSurface

pytestmark = pytest.mark.live

CASES = [
    ("plur_capture", {}, ["summary"]),
    ("plur_capture", {"agent": "chat", "session_id": "s-1"}, ["summary"]),
    ("plur_learn", {}, ["statement"]),
    ("plur_learn", {"tags": ["session:s-1"], "scope": "project:x"}, ["statement"]),
    ("plur_learn_batch", {}, ["engrams"]),
    ("plur_learn_batch", {"max_llm_calls": 0}, ["engrams"]),
    ("plur_learn_batch", {"engrams": [{"tags": ["a"]}]}, ["engrams"]),
    ("plur_inject_hybrid", {"budget": 100}, ["task"]),
]


@pytest.mark.parametrize("profile", ["lean", "full"])
@pytest.mark.parametrize("tool,args,missing", CASES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(CASES)])
def test_rejected_by_both_with_the_same_fields(servers, profile, tool, args, missing) -> None:
    answers = {}
    for kind in ("real", "fake"):
        server = servers[(kind, profile)]
        name, arguments = ToolSurface.detect(server.tools).route(tool, args)
        outcome = server.call(name, arguments)
        assert outcome.is_error, f"{kind}/{profile} accepted {tool} {args}: {outcome.text[:300]}"
        error = parse_error(outcome.data, outcome.text)
        assert list(error.missing_fields) == missing, (kind, error)
        assert list(error.received_fields) == list(args), (kind, error)
        answers[kind] = outcome.text
    assert answers["fake"] == answers["real"]


@pytest.mark.parametrize("args", [{"statement": ""}, {"statement": 5}, {"statement": "x", "type": "bogus"},
                                  {"statement": "x", "tags": 7}])
def test_bad_learn_values_get_the_same_answer(servers, args) -> None:
    real = servers[("real", "full")].call("plur_learn", args)
    fake = servers[("fake", "full")].call("plur_learn", args)
    assert real.is_error and fake.is_error
    assert fake.text == real.text


@pytest.mark.parametrize("name,args", [
    ("plur_nope", {}),
    ("plur_inject_hybrid", {"task": "x"}),  # hidden in lean: "not directly callable"
    ("plur_admin", {"action": "plur_nope", "args": {}}),
    ("plur_admin", {"action": "plur_capture", "args": {}}),
    ("plur_admin", {}),
])
def test_lean_surface_errors_match(servers, name, args) -> None:
    real = servers[("real", "lean")].call(name, args)
    fake = servers[("fake", "lean")].call(name, args)
    assert real.is_error and fake.is_error
    assert fake.text == real.text


def test_unknown_keys_are_ignored_and_array_strings_accepted_by_both(servers) -> None:
    for kind in ("real", "fake"):
        outcome = servers[(kind, "full")].call(
            "plur_learn", {"statement": "Comma tags are split by the gnu", "tags": "a, b", "agent": "ignored"})
        assert not outcome.is_error, (kind, outcome.text)
