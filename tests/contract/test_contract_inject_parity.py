"""Inject on the real server and on the fake selects the same ids and shows the same words.

The documented cases: one engram of each type (and the "never" and tag variants), each with
words no other engram has, learned the same way, in the same order, into a fresh real server
and a fresh fake. For each task, both must return the same `injected_ids` (same order), the
same count and token estimate, and identical `directives` and `consider` texts, which puts the
same engrams' words in the same buckets and leaves the same ones out (the constraints).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.plur_server import ServerThread, fakeplur_spec, real_plur_spec, running
from tmg.memory import payloads
from tmg.memory.results import parse_inject

pytestmark = pytest.mark.live

# (statement, learn extras). No two statements share a word of 3+ letters: the real server links
# engrams that its learn-time duplicate search returns together ("co_accessed" associations) and
# then spreads inject to them, which fakeplur does not model (see fakeplur/README.md).
ENGRAMS: list[tuple[str, dict]] = [
    ("Billing invoices are generated nightly by ledger jobs", {"type": "architectural"}),  # directives
    ("A sprocket means one pluggable rendering adapter inside compositor pipelines",
     {"type": "terminological"}),  # consider, cut to 60 characters
    ("Never indent YAML files with tabs", {}),  # behavioral default: only in injected_ids
    ("Release builds execute smoke suites before tagging", {"type": "procedural"}),  # ids only
    ("Gateways must not call warehouse databases directly", {"type": "architectural"}),  # "must not": ids only
    ("Prefer short commit subjects", {"tags": ["git"]}),  # matched by its tag
    ("Search queries pass through an indexer facade", {"type": "architectural"}),  # directives
    ("Alpha mascots wear purple hats", {"type": "architectural", "scope": "project:alpha"}),  # shared scope
]

TASKS: list[tuple[str, int, str]] = [
    ("how are billing invoices produced by the ledger", 2000, ""),
    ("what is a sprocket in the compositor", 2000, ""),
    ("can I indent yaml with tabs", 2000, ""),
    ("release smoke tagging", 2000, ""),
    ("does the gateway touch the warehouse database", 2000, ""),
    ("git workflow advice", 2000, ""),
    ("ledger sprocket yaml release warehouse git indexer alpha", 2000, ""),
    ("ledger sprocket yaml release warehouse git indexer alpha", 120, ""),
    ("ledger sprocket yaml release warehouse git indexer alpha", 30, ""),
    ("alpha mascots hats", 2000, "project:beta"),
    ("alpha mascots hats", 2000, "project:alpha"),
    ("ledger invoices", 2000, "global"),
    ("nothing here matches zzz", 2000, ""),
    ("a an of to", 2000, ""),
]


def _learn_all(server: ServerThread) -> list[str]:
    ids = []
    for statement, extras in ENGRAMS:
        outcome = server.call("plur_learn", {"statement": statement, **extras})
        assert not outcome.is_error, outcome.text
        ids.append(outcome.data["id"])
    return ids


@pytest.fixture(scope="module")
def pair(plur_entry: Path, tmp_path_factory) -> Iterator[tuple[ServerThread, ServerThread]]:
    real_root, fake_root = tmp_path_factory.mktemp("inject-real"), tmp_path_factory.mktemp("inject-fake")
    with running(real_plur_spec(real_root, "full", plur_entry)) as real, \
            running(fakeplur_spec(fake_root, "full", store=fake_root / "store.json")) as fake:
        assert _learn_all(real) == _learn_all(fake)
        # Guard the premise: the real learn-time duplicate search linked nothing to spread to.
        store = yaml.safe_load((real_root / "home" / ".plur" / "engrams.yaml").read_text())
        assert [e["id"] for e in store["engrams"] if e.get("associations")] == []
        yield real, fake


@pytest.mark.parametrize("task,budget,scope", TASKS, ids=[f"{i}-{t[:24]}-{b}" for i, (t, b, _) in enumerate(TASKS)])
def test_same_selection_and_buckets(pair, task: str, budget: int, scope: str) -> None:
    real, fake = pair
    payload = payloads.inject_payload(task, budget, scope)
    answers = [server.call("plur_inject_hybrid", payload) for server in (real, fake)]
    assert not any(a.is_error for a in answers), [a.text for a in answers]
    real_data, fake_data = (a.data for a in answers)
    for key in ("injected_ids", "count", "tokens_used", "directives", "consider", "mode"):
        assert fake_data[key] == real_data[key], f"{key}: real={real_data[key]!r} fake={fake_data[key]!r}"


def test_the_cases_cover_every_bucket(pair) -> None:
    """Guard the case list itself: directives, consider and text-less ids all occur."""
    real, _ = pair
    result = parse_inject(real.call("plur_inject_hybrid", payloads.inject_payload(TASKS[6][0], 2000)).data)
    assert result.directives and result.consider and result.ids_without_text
    assert len(result.consider[0].text) == 60
    texts = " ".join(line.text for line in result.directives + result.consider)
    assert "YAML" not in texts and "warehouse" not in texts and "smoke" not in texts
    assert len(result.ids_without_text) == 4  # behavioral x2, procedural, "must not"
