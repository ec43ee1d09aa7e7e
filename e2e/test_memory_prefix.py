"""Placement that keeps servers' prefix caches warm (memory.md §3, issue 22): over a 20-prompt
session with memory on, each request repeats the one before it as an identical prefix, all but
the latest user turn, which carries the notes recall brought that the session's recent prompts
were not sent; the user's instructions end the system message, unchanged while their set is.

The figure is computed from what the mock API received (its request log), the way a server's
prefix cache sees it: the share of request N's messages that request N+1 repeats, unchanged,
from the start. A block in the system message (changing with every prompt's recall) makes it 0.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from e2e.mock_llm import Text
from e2e.plur import FakePlur, instructions_part, notes_part
from tmg.memory.injector import NOTES_HEADING
from tmg.memory.sent_notes import WINDOW

PROMPTS = 20
TOPICS = ["heron", "zebrafish", "cactus", "kestrel", "lighthouse", "saffron", "glacier", "marmot", "quartz", "tundra",
          "walrus", "juniper", "obsidian", "pelican", "mangrove", "basalt", "lynx", "orchid", "fjord", "sequoia"]


@pytest.fixture
def plur(tmp_path) -> FakePlur:
    return FakePlur(tmp_path)


def common_prefix(a: list[Any], b: list[Any]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def prefix_shares(requests: list[dict[str, Any]]) -> tuple[float, float, int]:
    """(messages, characters, characters lost): the share of request N that request N+1 repeats
    as an identical prefix, summed over the session, and the characters of request N it does not
    repeat. Characters are those of each message's JSON, a stand-in for the tokens a server's
    prefix cache keeps."""
    kept = total = kept_chars = total_chars = 0
    for this, following in zip(requests, requests[1:]):
        a, b = this["messages"], following["messages"]
        same = common_prefix(a, b)
        kept += same
        total += len(a)
        texts_a = [json.dumps(m, sort_keys=True) for m in a]
        texts_b = [json.dumps(m, sort_keys=True) for m in b]
        kept_chars += sum(len(t) for t in texts_a[:same])
        if same < len(a) and same < len(b):  # the first differing message: its common leading characters
            kept_chars += common_prefix(list(texts_a[same]), list(texts_b[same]))
        total_chars += sum(len(t) for t in texts_a)
    return kept / total, kept_chars / total_chars, total_chars - kept_chars


@pytest.mark.in_process
def test_twenty_prompts_with_memory_on_repeat_their_prefix(tmg, llm, plur):
    seed = [{"statement": f"The {topic} project deploys from the {topic}-main branch"} for topic in TOPICS]
    seed.append({"statement": "Always answer in French", "pinned": True})
    tmg.write_config(plur.config(learn="full", seed=seed))
    for index, topic in enumerate(TOPICS):
        llm.enqueue(Text(f"Réponse {index}: the {topic} project is fine."))
        r = tmg.run("-r", f"where does the {topic} project deploy from?", env=tmg.env(memory=True))
        assert r.code == 0, r.err
    requests = list(llm.requests)
    assert len(requests) == PROMPTS
    # The user's instruction ends every request's system message, byte-identical throughout.
    systems = {json.dumps(q["messages"][0]) for q in requests}
    assert len(systems) == 1 and instructions_part(requests[0]).endswith("- Always answer in French")
    # Recalled notes go right before the latest user turn only (a system message of their own),
    # never stored, never in the leading system message; a note the session's recent prompts
    # carried is not sent again.
    riders = [notes_part(q) for q in requests]
    for q in requests:
        assert NOTES_HEADING not in json.dumps(q["messages"][:-2])
    assert f"{TOPICS[0]}-main" in riders[0] and all(f"{t}-main" in riders[0] for t in TOPICS)
    assert riders[1:WINDOW + 1] == [""] * WINDOW  # each of these recalled the same notes: nothing new
    assert set(riders[WINDOW + 1].splitlines()) == set(riders[0].splitlines())  # not carried for WINDOW prompts
    messages, chars, lost = prefix_shares(requests)
    # What the next request does not repeat is the notes of this one and the user turn after
    # them, nothing else (the JSON around them aside: at most 80 characters): the minimum for
    # notes that are never stored.
    rider_chars = sum(len(json.dumps(r)) + len(json.dumps(q["messages"][-1])) + 80
                      for r, q in zip(riders[:-1], requests) if r)
    print(f"\nprefix kept over {PROMPTS} prompts, memory on: {messages:.1%} of messages, {chars:.1%} of characters; "
          f"not kept: {lost} characters, of which the notes themselves are {rider_chars}")
    assert messages >= 0.95
    assert lost <= rider_chars
