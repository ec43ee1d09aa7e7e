"""Every payload tmg builds validates against the live schemas and is accepted, in both profiles.

The real server ignores unknown keys, so acceptance alone cannot catch an extra key: the schema
check with additionalProperties forbidden does.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from tmg.memory import payloads
from tmg.memory.client import PlurClient

pytestmark = pytest.mark.live
TAGS = payloads.session_tags("contract-1", "chat")

PAYLOADS: list[tuple[str, dict[str, Any]]] = [
    ("plur_inject_hybrid", payloads.inject_payload("how do we deploy the payments service", 2000)),
    ("plur_inject_hybrid", payloads.inject_payload("deploy payments", 500, scope="project:contract")),
    ("plur_capture", payloads.capture_payload(payloads.capture_summary("The answer, in words."), "chat", "contract-1")),
    ("plur_capture", payloads.capture_payload(
        payloads.capture_summary(error="rate limited", prompt="what now?"), "chat", "contract-1")),
    ("plur_learn", payloads.learn_payload("From now on, always run the linter before committing", TAGS)),
    ("plur_learn", payloads.learn_payload("Never deploy on Fridays", TAGS, scope="project:contract")),
    ("plur_learn_batch", payloads.learn_batch_payload(
        ["The payments service deploys through the blue pipeline", "Ünïcödé statement ✓\nwith two lines"], TAGS)),
    ("plur_learn_batch", payloads.learn_batch_payload(["Scoped batch statement"], TAGS, scope="project:contract")),
    ("plur_recall", payloads.recall_payload("payments deploy", limit=5)),
    ("plur_recall", payloads.recall_payload("payments", scope="project:contract")),
    ("plur_timeline", payloads.timeline_payload(search="answer")),
    ("plur_status", {}),
]


def _closed(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with additionalProperties forbidden everywhere: an extra key becomes an error."""
    schema = copy.deepcopy(schema)

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node.setdefault("additionalProperties", False)
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(schema)
    return schema


@pytest.mark.parametrize("tool,payload", PAYLOADS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(PAYLOADS)])
def test_payload_validates_against_the_live_schema(real_full, tool: str, payload: dict[str, Any]) -> None:
    jsonschema.validate(payload, _closed(real_full.tools[tool].input_schema))


@pytest.mark.parametrize("kind", ["real", "fake"])
@pytest.mark.parametrize("profile", ["lean", "full"])
def test_every_payload_is_accepted(servers, kind: str, profile: str) -> None:
    server = servers[(kind, profile)]
    client = PlurClient(server.connection, timeout=15)
    for tool, payload in PAYLOADS:
        name, arguments = client.surface.route(tool, payload)
        if name == "plur_admin":
            jsonschema.validate(arguments, _closed(server.tools["plur_admin"].input_schema))
        outcome = server.call(name, arguments)
        assert not outcome.is_error, f"{kind}/{profile} rejected {tool} {payload}: {outcome.text[:500]}"
        assert isinstance(outcome.data, dict), outcome.text[:200]


@pytest.mark.parametrize("kind", ["real", "fake"])
@pytest.mark.parametrize("profile", ["lean", "full"])
def test_client_writes_land_and_read_back(servers, kind: str, profile: str) -> None:
    """learn, learn_batch and capture land, checked by reading back through recall/timeline/status."""
    server = servers[(kind, profile)]
    client = PlurClient(server.connection, timeout=15)
    word = f"zebu{kind}{profile}"
    before = server.run(client.status())
    learned = server.run(client.learn(f"Always feed the {word} at noon", TAGS))
    batch = server.run(client.learn_batch([f"The {word} pen is north", f"The {word} likes hay"], TAGS))
    episode = server.run(client.capture(f"talked about the {word}", "chat", "contract-1"))
    assert learned.ok and batch.ok and episode.ok, (learned, batch, episode)
    assert learned.value.startswith("ENG-") and all(i and i.startswith("ENG-") for i in batch.value.ids)
    recalled = server.run(client.recall(word, limit=10))
    assert recalled.ok
    assert {e.statement for e in recalled.value} >= {
        f"Always feed the {word} at noon", f"The {word} pen is north", f"The {word} likes hay"}
    timeline = server.run(client.timeline(search=word))
    assert timeline.ok and [e.id for e in timeline.value] == [episode.value.id]
    after = server.run(client.status())
    assert after.value.engram_count == before.value.engram_count + 3
    assert after.value.episode_count == before.value.episode_count + 1


@pytest.mark.parametrize("kind", ["real", "fake"])
def test_exact_duplicate_returns_the_existing_id(servers, kind: str) -> None:
    server = servers[(kind, "full")]
    client = PlurClient(server.connection, timeout=15)
    first = server.run(client.learn("Duplicate detection keeps one okapi", TAGS))
    again = server.run(client.learn("Duplicate detection keeps one okapi", TAGS))
    batch = server.run(client.learn_batch(["Duplicate detection keeps one okapi"], TAGS))
    assert first.ok and again.ok and batch.ok
    assert again.value == first.value == batch.value.ids[0]
