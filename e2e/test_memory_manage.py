"""`tmg memory list|search|forget|pin`: what memory holds, looked after through PLUR's own tools
(fakeplur's call log shows plur_pin, plur_recall, plur_forget; its store shows the effect)."""

from __future__ import annotations

import pytest

from e2e.plur import FakePlur

PINNED = "From now on, always answer in French"
NOTE = "The heron project deploys from the heron-main branch"


@pytest.fixture
def plur(tmp_path) -> FakePlur:
    return FakePlur(tmp_path)


def run(tmg, *args):
    return tmg.run("memory", *args, env=tmg.env(memory=True))


def test_list_search_pin_and_forget_go_through_plurs_tools(tmg, plur):
    tmg.write_config(plur.config(learn="full", seed=[{"statement": PINNED, "pinned": True}, {"statement": NOTE}]))
    r = run(tmg, "list")
    assert r.code == 0, r.err
    pinned_id = next(e["id"] for e in plur.engrams() if e["statement"] == PINNED)
    note_id = next(e["id"] for e in plur.engrams() if e["statement"] == NOTE)
    assert f"{pinned_id}  {PINNED}" in r.out and NOTE not in r.out and "2 engram(s)" in r.out

    r = run(tmg, "search", "heron", "branch")
    assert r.code == 0 and r.out == f"{note_id}  {NOTE}\n"

    r = run(tmg, "pin", note_id)
    assert r.code == 0 and r.out.startswith("pinned") and all(e["pinned"] for e in plur.engrams())
    r = run(tmg, "pin", "--off", note_id)
    assert r.code == 0 and not next(e for e in plur.engrams() if e["id"] == note_id)["pinned"]

    r = run(tmg, "forget", pinned_id)
    assert r.code == 0 and r.out == f"forgotten: {pinned_id}  {PINNED}\n"
    assert next(e for e in plur.engrams() if e["id"] == pinned_id)["status"] == "retired"
    assert [c["tool"] for c in plur.calls() if c["tool"] in ("plur_forget", "plur_pin")] == [
        "plur_pin", "plur_pin", "plur_pin", "plur_forget"]  # list, pin, unpin, forget

    r = run(tmg, "forget", "ENG-2099-01-01-999")
    assert r.code == 1 and r.err == "tmg: memory: could not forget ENG-2099-01-01-999 (Engram not found: ENG-2099-01-01-999)\n"
