"""The read process's inject scores only the engrams that can score (tmg/broker/plur_reader.mjs), and
answers exactly what PLUR answers without that: the real PLUR, the same store, the filter on and off
(`TMG_READER_FILTER=0`), every answer compared byte for byte.

The store has what PLUR's selection looks at beyond a statement's words: tags and domains in mixed
case, pinned engrams, retired and dormant ones (spreading counts those), associations and relations
to engrams that share no word with any prompt (reached only by spreading, one hop), a dangling one,
superseded engrams, constraints, knowledge anchors, feedback, commitments and scopes.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from bench.plur_store import Prose, engram
from tests.support.plur_fixtures import plur_entry  # noqa: F401 - a fixture
from tests.support.plur_server import ServerThread, real_plur_spec, running
from tmg.broker.reinforce import SHIM

pytestmark = pytest.mark.live

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
PROJECT = "project:github.com/acme/bench"
# Statements of made-up words only: no prompt below meets them, spreading alone can select them.
LEAVES = [f"Zorvik quandel mip{i} trellopax vunder" for i in range(12)]
LEAF_IDS = [f"ENG-2025-01-01-{100 + i:03d}" for i in range(len(LEAVES))]
LONELY_ID = "ENG-2025-12-29-001"  # made-up words too, and nothing points to it
RETIRED_IDS = ["ENG-2025-12-30-001", "ENG-2025-12-30-002", "ENG-2025-12-30-003"]
MISSING_ID = "ENG-2020-01-01-999"
PROMPTS = [
    "How do I roll back a failed deploy of the release branch?",
    "what is the kestrel nightly schedule",
    "kestrel",
    "KESTREL Nightly: schedule?!",
    "what about infra deploy and the ops team",
    "the",
    "ok",
    "DEPLOY THE CACHE SERVER",
    "what was the old deploy process previously",  # historical intent: superseded engrams keep their score
    "ünïcode İstanbul deploy-ment résumé",
    "database migration backup restore monitor alert",
    "retry the queue worker after a timeout of the request",
    "is the yaml schema of the json api token documented",
    "merge commit review build test",
    "latency metric thread memory file folder path script",
    "osprey plover heron",
    "log error index query config",
    "session:filter-3 mode:default",
    "how does the backend team handle nightly releases on fridays",
    "never push to main without a review",
]


def _store(plur_dir: Path) -> dict[str, list[str]]:
    """Write the store (seeded); return the ids of what the assertions look for."""
    rng = random.Random(22)
    prose = Prose(seed=22)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    stamp = lambda days: now - timedelta(days=days)  # noqa: E731  older than PLUR's fresh tail (7 days)
    extra = ["kestrel", "nightly", "schedule", "rollback", "Deploy", "İstanbul", "ünïcode", "backend"]
    tags_pool = ["Deploy", "KESTREL", "ci", "Database", "mode:default", "origin:user", "ops", "release"]
    domains = [None, None, "infra.deploy", "Ops/Nightly.Kestrel", "team.backend", "Release/Branch", "misc"]
    levels = ["apply", "apply", "remember", "understand", "analyze", "evaluate", "create"]
    commitments = ["leaning", "leaning", "decided", "locked", "exploring"]
    records: list[dict[str, Any]] = []
    ids: dict[str, list[str]] = {"pinned": [], "leaves": LEAF_IDS}
    for index in range(300):
        statement = prose.sentence(rng.randint(5, 14))
        if rng.random() < 0.25:
            statement = statement.rstrip(".") + f" {rng.choice(extra)}."
        pinned = index % 31 == 0
        if pinned:
            statement = rng.choice(["Never ", "Always ", "From now on, "]) + statement[0].lower() + statement[1:]
        record = engram(f"ENG-2025-{1 + index // 28:02d}-{1 + index % 28:02d}-{index:03d}", statement,
                        stamp(rng.randint(10, 900)), pinned=pinned,
                        tags=[f"session:filter-{index // 3}", *rng.sample(tags_pool, rng.randint(0, 3))],
                        source="user" if pinned else None)
        record["knowledge_type"]["cognitive_level"] = rng.choice(levels)
        record["commitment"] = rng.choice(commitments)
        record["activation"]["retrieval_strength"] = round(rng.uniform(0.3, 0.95), 3)
        if domain := rng.choice(domains):
            record["domain"] = domain
        if rng.random() < 0.2:
            record["scope"] = PROJECT
        if rng.random() < 0.15:
            record["feedback_signals"] = {"positive": rng.randint(0, 5), "negative": rng.randint(0, 5), "neutral": 0}
        if rng.random() < 0.05:
            record["knowledge_anchors"] = [{"path": "docs/deploy.md", "relevance": "primary",
                                            "snippet": "deploy the release branch nightly with the kestrel schedule"}]
        records.append(record)
        if pinned:
            ids["pinned"].append(record["id"])
    for ident, statement in zip(LEAF_IDS, LEAVES):
        records.append(engram(ident, statement, stamp(400), pinned=False, tags=["leaf"], source=None))
    records.append(engram(LONELY_ID, "Plimsar ovendrift quax", stamp(300), pinned=False, tags=["leaf"], source=None))
    for n, ident in enumerate(RETIRED_IDS):
        retired = engram(ident, f"Deploy the kestrel release branch the old way ({n})", stamp(500), pinned=False,
                         tags=["Deploy"], source=None)
        retired["status"] = "retired" if n < 2 else "dormant"
        records.append(retired)
    rng.shuffle(records)  # leaves and retired ones among the rest: the store's order is what ties keep
    plain = [r for r in records if r["id"] not in {*LEAF_IDS, *RETIRED_IDS, LONELY_ID}]
    targets = LEAF_IDS + RETIRED_IDS + [MISSING_ID]
    for record in rng.sample(plain, 90):  # associations, or (with none) relations, to leaves mostly
        if rng.random() < 0.7:
            record["associations"] = [
                {"target_type": rng.choice(["engram", "engram", "engram", "document"]),
                 "target": rng.choice(targets + [r["id"] for r in rng.sample(plain, 2)]),
                 "type": (kind := rng.choice(["semantic", "causal", "temporal", "co_accessed"])),
                 "strength": round(rng.uniform(0.2, 0.95), 2),
                 **({"updated_at": stamp(rng.randint(0, 300)).strftime("%Y-%m-%d")} if kind == "co_accessed" else {})}
                for _ in range(rng.randint(1, 3))]
        else:
            record["relations"] = {kind: rng.sample(targets, rng.randint(0, 2))
                                   for kind in ("broader", "narrower", "related")}
    for record in rng.sample(plain, 8):
        record.setdefault("relations", {"broader": [], "narrower": [], "related": []})
        record["relations"]["superseded_by"] = [rng.choice(plain)["id"]]
    plur_dir.mkdir(parents=True, exist_ok=True)
    text = yaml.dump({"engrams": records}, Dumper=DUMPER, allow_unicode=True, sort_keys=False)
    (plur_dir / "engrams.yaml").write_text(text)
    ids["all"] = [r["id"] for r in records]
    ids["spread_from_pinned"] = [
        target for r in records if r.get("pinned")
        for target in [a["target"] for a in r["associations"] if a["target_type"] == "engram"]
        + [i for kind in ("broader", "narrower", "related") for i in r.get("relations", {}).get(kind, [])]]
    return ids


def _reader(root: Path, entry: Path, store: Path, filtered: bool) -> Any:
    spec = real_plur_spec(root, "full", entry)
    shutil.copytree(store, root / "home" / ".plur")  # each its own copy of the same file
    return replace(spec, args=(str(SHIM), str(entry)),
                   env={**spec.env, "TMG_READER_FILTER": "trace" if filtered else "0"})


@pytest.fixture(scope="module")
def readers(plur_entry: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerThread, ServerThread, dict, Path]]:
    store = tmp_path_factory.mktemp("store") / ".plur"
    ids = _store(store)
    off_spec = _reader(tmp_path_factory.mktemp("off"), plur_entry, store, filtered=False)
    on_spec = _reader(tmp_path_factory.mktemp("on"), plur_entry, store, filtered=True)
    with running(off_spec) as off, running(on_spec) as on:
        for server in (off, on):
            status = server.call("plur_status", {}).data  # every engram read (its count leaves out the retired)
            assert status["engram_count"] == len(ids["all"]) - 2 and not status.get("quarantined"), status
        assert "tmg: reader-patched (inject scores every engram)\n" in Path(off_spec.errlog).read_text()
        assert "tmg: reader-patched\n" in Path(on_spec.errlog).read_text()
        ids["files"] = [str(Path(spec.env["HOME"]) / ".plur" / "engrams.yaml") for spec in (off_spec, on_spec)]
        yield off, on, ids, Path(on_spec.errlog)


def _inject(server: ServerThread, task: str, **extra: Any) -> tuple[bool, str]:
    outcome = server.call("plur_inject_hybrid", {"task": task, **extra}, timeout=60)
    return outcome.is_error, outcome.text


def _spread_drops(server: ServerThread) -> Any:
    return server.call("plur_status", {}).data.get("spread_drops")


def _scored(log: Path) -> list[tuple[int, int]]:
    """What the filtered reader traced: (engrams given to PLUR's selection, engrams in the store) per inject."""
    found = re.findall(r"tmg: inject scored (\d+) of (\d+) engrams", log.read_text())
    return [(int(some), int(of)) for some, of in found]


def test_the_filtered_inject_answers_byte_for_byte_what_plur_answers(readers) -> None:
    off, on, ids, log = readers
    before = len(_scored(log))
    reached: set[str] = set()
    for n, task in enumerate(PROMPTS):
        for extra in ({"budget": 2000}, {"budget": [400, 8000, 1200][n % 3]}, {"budget": 2000, "scope": PROJECT}):
            want = _inject(off, task, **extra)
            got = _inject(on, task, **extra)
            assert got == want, (task, extra)
            assert not want[0], want
            reached |= {i for i in ids["leaves"] if i in want[1]}
    assert reached, "no prompt selected a leaf by spreading: the store does not test the one hop"
    scored = _scored(log)[before:]
    assert len(scored) == 3 * len(PROMPTS) and {of for _some, of in scored} == {len(ids["all"])}
    assert sum(some for some, _of in scored) < 0.6 * sum(of for _some, of in scored), scored  # it filtered
    drops = _spread_drops(off)
    assert drops and drops["dropped_retired"] > 0 and drops["dropped_unresolvable"] > 0, drops
    assert _spread_drops(on) == drops  # spreading met the same retired and dangling targets


def test_a_prompt_meeting_no_engram_still_brings_every_pinned_one(readers) -> None:
    off, on, ids, log = readers
    task = "zzqx plover wibblethorp"
    got = on.call("plur_inject_hybrid", {"task": task, "budget": 2000}).data
    some, of = _scored(log)[-1]
    assert some < 40 and of == len(ids["all"])  # the pinned, the retired and dormant, what the pinned point to
    assert set(ids["pinned"]) <= set(got["injected_ids"])  # the rest is reached by spreading from them
    assert set(got["injected_ids"]) - set(ids["pinned"]) <= set(ids["spread_from_pinned"]), got
    assert all(f"[{i}] " in got["directives"] for i in ids["pinned"])  # their words, whole (wholeWords)
    assert _inject(on, task, budget=2000) == _inject(off, task, budget=2000)


def test_concurrent_injects_do_not_see_each_others_filter(readers) -> None:
    off, on, _ids, _log = readers
    tasks = PROMPTS[:8]
    want = [_inject(off, task, budget=2000) for task in tasks]

    async def together() -> list[Any]:
        calls = [on.connection.call_tool("plur_inject_hybrid", {"task": t, "budget": 2000}, timeout=60) for t in tasks]
        return await asyncio.gather(*calls)

    got = [(o.is_error, o.text) for o in on.run(together(), timeout=90)]
    assert got == want


def test_a_changed_store_is_scored_anew(readers) -> None:
    # PLUR parses the file again once it changed (new objects): the words kept of the old parse
    # must not answer for it, whether the store keeps its length (a statement edited) or not.
    off, on, ids, _log = readers
    files = [Path(f) for f in ids["files"]]
    original = [f.read_bytes() for f in files]
    task = "when does the kestrel harbour job run"

    engrams = yaml.load(original[0], Loader=LOADER)["engrams"]

    def change(edit) -> None:
        edit(engrams)
        text = yaml.dump({"engrams": engrams}, Dumper=DUMPER, allow_unicode=True, sort_keys=False)
        for f in files:
            f.write_text(text)

    def lonely(engrams: list[dict[str, Any]]) -> dict[str, Any]:
        return next(e for e in engrams if e["id"] == LONELY_ID)

    try:
        assert LONELY_ID not in on.call("plur_inject_hybrid", {"task": task}).data["injected_ids"]
        change(lambda listed: lonely(listed).update(statement="Plimsar harbour job: nightly, after the kestrel"))
        got = _inject(on, task)
        assert LONELY_ID in on.call("plur_inject_hybrid", {"task": task}).data["injected_ids"]
        assert got == _inject(off, task)
        added = "ENG-2025-12-31-001"
        change(lambda listed: listed.append({**lonely(listed), "id": added, "statement": "The harbour bell rings"}))
        got = _inject(on, "who rings the harbour bell")
        assert added in on.call("plur_inject_hybrid", {"task": "who rings the harbour bell"}).data["injected_ids"]
        assert got == _inject(off, "who rings the harbour bell")
    finally:
        for f, text in zip(files, original):
            f.write_bytes(text)
