"""A repository's team store: the ids PLUR gives its engrams, the team file tmg writes, the link
PLUR reads only while the checkout is trusted, and how recall heads the team's instructions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tmg.memory.injector import INSTRUCTIONS_HEADING, NOTES_HEADING, SHARED_HEADING, Note, render_block
from tmg.memory.team_file import TeamFileError, add, read_items, remove, shared_record
from tmg.memory.team_store import TEAM_FILE, original_id, point, shared_source, target, team_prefix
from tmg.project import Project

PLUR_CORE = Path(__file__).resolve().parents[2] / ".cache/plur/0.20.0/node_modules/@plur-ai/core/dist/index.js"


@pytest.mark.parametrize("scope, prefix", [
    ("project:github.com/acme/heron", "ENG-PGI-"),
    ("project:x", "ENG-PXX-"),
    ("global", "ENG-GBL-"),
    ("ab", "ENG-ABA-"),
])
def test_the_prefix_is_plurs_store_prefix(scope, prefix):
    assert team_prefix(scope) == prefix
    assert original_id(prefix + "2026-1201-abc", scope) == "ENG-2026-1201-abc"
    assert original_id("ENG-2026-1201-abc", scope) is None


def test_the_prefix_rule_is_the_one_in_the_installed_plur():
    if not PLUR_CORE.exists():
        pytest.skip("the pinned PLUR is not installed (scripts/bootstrap installs it)")
    source = PLUR_CORE.read_text(encoding="utf-8")
    rule = re.search(r"function storePrefix\(scope\) \{.*?\n\}", source, re.S)
    assert rule is not None, "PLUR no longer has storePrefix: check team_prefix against its new rule"
    assert "scope.split(/[:\\-_./]/)" in rule.group(0) and "parts[0][0] + p2[0] + (p2[1] || p2[0])" in rule.group(0)


def test_the_team_file_holds_one_item_per_statement_in_a_stable_order(tmp_path):
    file = tmp_path / TEAM_FILE
    record = {"id": "ENG-2026-12-01-007", "statement": "Run make lint first", "type": "behavioral",
              "pinned": True, "tags": ["session:abc", "ci"], "scope": "global"}
    item = shared_record(record, "project:x")
    assert item["scope"] == "project:x" and item["visibility"] == "public" and item["tags"] == ["ci"]
    first = add(file, item)
    again = add(file, shared_record({**record, "statement": "Run  make lint first"}, "project:x"))
    assert first.new and not again.new and again.id == first.id
    add(file, shared_record({**record, "statement": "Tabs, never spaces"}, "project:x"))
    items = read_items(file)
    assert [i["id"] for i in items] == sorted(i["id"] for i in items) and len(items) == 2
    assert file.read_text().startswith("# This repository's shared memory")
    assert remove(file, first.id)["statement"] == "Run make lint first"
    assert remove(file, first.id) is None and len(read_items(file)) == 1


def test_a_team_file_a_merge_broke_is_never_rewritten(tmp_path):
    file = tmp_path / TEAM_FILE
    file.parent.mkdir()
    file.write_text("engrams:\n<<<<<<< HEAD\n- id: a\n=======\n- id: b\n>>>>>>> theirs\n")
    before = file.read_text()
    with pytest.raises(TeamFileError, match="mend it first"):
        add(file, {"id": "ENG-1", "statement": "x"})
    assert file.read_text() == before


def _checkout(root: Path, name: str = "x") -> Project:
    (root / TEAM_FILE).parent.mkdir(parents=True)
    (root / TEAM_FILE).write_text("engrams: []\n")
    return Project(name, root)


def test_only_a_trusted_checkouts_file_is_linked_and_the_link_goes_with_the_trust(tmp_path):
    home, checkout = tmp_path / "home", _checkout(tmp_path / "clone")
    trusted: set[Path] = set()
    assert point(checkout, home, trusted.__contains__) is None
    trusted.add(checkout.root)
    store = point(checkout, home, trusted.__contains__)
    assert store is not None and target(store.link) == checkout.root / TEAM_FILE
    assert shared_source(home, team_prefix("project:x") + "2026-1", "project:x") == checkout.root / TEAM_FILE
    assert shared_source(home, "ENG-2026-1", "project:x") is None
    trusted.clear()
    assert point(checkout, home, trusted.__contains__) is None
    assert not store.link.exists() and not store.link.is_symlink()


def test_an_untrusted_clone_of_the_same_repository_unlinks_the_trusted_ones_file(tmp_path):
    home = tmp_path / "home"
    good, other = _checkout(tmp_path / "good"), _checkout(tmp_path / "other")
    store = point(good, home, {good.root}.__contains__)
    assert point(other, home, {good.root}.__contains__) is None
    assert not store.link.is_symlink()  # one scope, one link: PLUR must not read it from here
    assert point(good, home, {good.root}.__contains__) is not None  # back in the trusted one


def test_a_link_whose_checkout_lost_its_trust_is_swept_at_any_start(tmp_path):
    home = tmp_path / "home"
    a, b = _checkout(tmp_path / "a", "a"), Project("b", tmp_path / "b")
    (tmp_path / "b").mkdir()
    store = point(a, home, {a.root}.__contains__)
    point(b, home, lambda _p: False)
    assert not store.link.is_symlink()


def test_the_teams_instructions_come_after_the_users_under_their_own_heading():
    notes = [Note("ENG-PXX-1", "team rule", True, True), Note("ENG-2", "a note"), Note("ENG-1", "my rule", True)]
    block = render_block(notes, 2_000)
    assert block is not None
    text = block.block
    mine, team, other = text.index(INSTRUCTIONS_HEADING), text.index(SHARED_HEADING), text.index(NOTES_HEADING)
    assert mine < text.index("my rule") < team < text.index("team rule") < other < text.index("a note")
