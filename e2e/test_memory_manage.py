"""`tmg memory list|search|forget|pin|add`: what memory holds, looked after through PLUR's own
tools (fakeplur's call log shows plur_pin, plur_recall, plur_timeline, plur_forget, plur_learn;
its store shows the effect). The real server's legs, episodes among them: test_memory_private.py."""

from __future__ import annotations

import pytest

from e2e.plur import FakePlur

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

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
    assert f"{pinned_id}  [global]  {PINNED}" in r.out and NOTE not in r.out and "2 engram(s)" in r.out

    r = run(tmg, "search", "heron", "branch")
    assert r.code == 0 and r.out == f"{note_id}  [global]  {NOTE}\n"

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


def test_add_pins_the_users_words_scrubbed_in_the_scope_asked_for(tmg, plur):
    tmg.write_config(plur.config(learn="full"))
    r = run(tmg, "add", "--scope", "project:heron", "Deploy", "heron", "with", "pw:", "Hunter2Go")
    assert r.code == 0, r.err
    (engram,) = plur.engrams()
    assert engram["statement"] == "Deploy heron with pw: ***" and engram["pinned"] and engram["scope"] == "project:heron"
    assert "origin:user" in engram["tags"]
    assert r.out == (f"pinned (injected for every prompt, as your instruction): {engram['id']}  [project:heron]  "
                     "Deploy heron with pw: ***\na secret in it was masked before it was stored\n")
    r = run(tmg, "add", " ")
    assert r.code == 1 and r.err == "tmg: memory: add needs the words to remember\n"


def test_episodes_are_listed_and_searched_and_a_server_without_an_episodes_file_says_so(tmg, llm, plur):
    from e2e.mock_llm import Text

    tmg.write_config(plur.config(learn="capture"))
    llm.enqueue(Text("The heron release is on Monday."))
    assert tmg.run("-r", "when is the heron release?", env=tmg.env(memory=True)).code == 0
    (episode,) = plur.episodes()
    r = run(tmg, "list")
    assert f"  {episode['id']}  " in r.out and "The heron release is on Monday." in r.out
    r = run(tmg, "search", "heron", "monday")
    assert r.code == 0 and r.out.startswith(f"{episode['id']}  ") and r.out.endswith("The heron release is on Monday.\n")
    r = run(tmg, "search", "heron", "tuesday")  # every word, not any
    assert r.code == 0 and r.out == "no memory matches 'heron tuesday'\n"
    r = run(tmg, "forget", episode["id"])  # fakeplur keeps a JSON store, not PLUR's episodes.yaml
    assert r.code == 1 and r.err.startswith(f"tmg: memory: could not forget {episode['id']} (this memory server "
                                            "keeps no episodes.yaml in ")
