"""Placement that keeps servers' prefix caches warm (memory.md §3): over a 20-prompt session
with memory on, each request repeats the one before it as an identical prefix, all but the
latest user turn, which carries that prompt's memory block.

The figure is computed from what the mock API received (its request log), the way a server's
prefix cache sees it: the share of request N's messages that request N+1 repeats, unchanged,
from the start. A block in the system message (changing with every prompt's recall) makes it 0.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from e2e.mock_llm import Text
from e2e.plur import FakePlur, memory_blocks

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
    # Memory was on and recall changed with every prompt: each request has one block, its own.
    blocks = [memory_blocks(q) for q in requests]
    assert all(len(b) == 1 for b in blocks) and len({b[0] for b in blocks}) == PROMPTS
    assert all(f"{topic}-main" in b[0] and "Always answer in French" in b[0] for topic, b in zip(TOPICS, blocks))
    # ... and it rode with the latest user turn only: never in the system message, never stored.
    for q in requests:
        assert "## PLUR MEMORY" not in json.dumps(q["messages"][:-1])
        assert "## PLUR MEMORY" in q["messages"][-1]["content"]
    messages, chars, lost = prefix_shares(requests)
    # What the next request does not repeat is the memory block of this one and nothing else
    # (its markers and the JSON after it in that message aside: at most 40 characters): the
    # minimum for a block that is never stored.
    block_chars = sum(len(json.dumps(f"## PLUR MEMORY{b[0]}[/PLUR-MEMORY]")) + 40 for b in blocks[:-1])
    print(f"\nprefix kept over {PROMPTS} prompts, memory on: {messages:.1%} of messages, {chars:.1%} of characters; "
          f"not kept: {lost} characters, of which the blocks themselves are {block_chars}")
    assert messages >= 0.95
    assert lost <= block_chars
