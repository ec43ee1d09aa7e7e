"""PLUR's reads on the broker's read process (issue 22): the real `tmg` one-shot, the real PLUR.

The broker runs PLUR's read process through tmg/broker/plur_reader.mjs, whose reads do not rewrite
the store and whose inject answers with every selected engram's words (no second scan for them);
the reads' reinforcement is replayed on PLUR's writer once the store is idle. Observed:
what reached the mock (the user's standing instruction in each request), the process the status
names, and what the store's own file says about the instruction afterwards (PLUR's injection
count and access frequency, written by PLUR's own code on the replay).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import yaml

from e2e.mock_llm import Text
from e2e.plur import instructions_part, notes_part
from e2e.test_memory_broker import Plur, status
from tests.support.waiting import eventually


def _engram(home: Path, statement: str) -> dict:
    engrams = yaml.safe_load((home / ".plur" / "engrams.yaml").read_text())["engrams"]
    (found,) = [e for e in engrams if e["statement"] == statement]
    return found


def test_reads_go_to_a_process_that_does_not_write_and_their_reinforcement_lands_later(tmg, llm, tmp_path,
                                                                                       plur_entry):
    plur = Plur(tmp_path, plur_entry)
    home = tmp_path / "store"
    seeded = f"Never deploy the osprey{uuid.uuid4().hex[:8]} service on Fridays"
    with plur.reader(home) as writer:  # the user's memory, learned earlier
        assert not writer.call("plur_learn", {"statement": seeded, "pinned": True}).is_error
    before = _engram(home, seeded)
    tmg.write_config(plur.config(home, learn="off"))
    env = tmg.env(memory=True)
    llm.enqueue(Text("Not on Fridays."), Text("Monday is fine."))
    for prompt in ("can I deploy today?", "and on Monday?"):
        r = tmg.run("-r", prompt, env=env, timeout=90)
        assert r.code == 0, r.err
    assert [f"- {seeded}" in instructions_part(req).splitlines() for req in llm.requests] == [True, True]

    server = int(status(tmg).split("server plur: up, pid ")[1].split(",")[0])
    assert "plur_reader.mjs" in Path(f"/proc/{server}/cmdline").read_bytes().decode()

    def reinforced() -> bool:
        after = _engram(home, seeded)
        return after.get("injection_count", 0) > before.get("injection_count", 0) or \
            after["activation"]["frequency"] > before["activation"]["frequency"]

    assert eventually(reinforced, guard=60)  # both prompts' reads, replayed on the writer while idle


def test_one_inject_brings_every_note_in_whole_words_with_no_recall_after_it(tmg, llm, tmp_path, plur_entry):
    # PLUR's own answer leaves its constraints bucket ("never ...") out and cuts `consider` lines to
    # 60 characters; through the read process both arrive whole, and the prompt makes one call.
    plur = Plur(tmp_path, plur_entry)
    home = tmp_path / "store"
    tag = uuid.uuid4().hex[:8]
    constraint = f"Never restart the kittiwake{tag} queue workers while a backup of the queue runs"
    fact = (f"The kittiwake{tag} queue workers drain the backlog of the nightly backup in about forty "
            "minutes, then restart on their own")
    with plur.reader(home) as writer:
        for statement in (constraint, fact):
            assert not writer.call("plur_learn", {"statement": statement}).is_error
    tmg.write_config(plur.config(home, learn="off"))
    llm.enqueue(Text("Wait for the backup."))
    r = tmg.run("-r", f"can I restart the kittiwake{tag} queue workers during the backup?",
                env=tmg.env(memory=True, TMG_DEBUG="1"), timeout=90)
    assert r.code == 0, r.err
    notes = notes_part(llm.requests[-1])
    assert f"- {constraint}" in notes.splitlines() and f"- {fact}" in notes.splitlines(), notes
    log = (tmg.home / "broker.log").read_text()  # the broker logs each forwarded call at --debug
    assert "read plur_inject_hybrid" in log and "plur_recall" not in log, log[-3000:]


def test_a_note_that_shares_only_function_words_with_the_prompt_is_not_recalled(tmg, llm, tmp_path, plur_entry):
    # PLUR counts any shared word of three letters as a half hit: "the" and "how" matched every
    # note in the store. tmg asks with the prompt's other words, so only what it is about comes.
    plur = Plur(tmp_path, plur_entry)
    home = tmp_path / "store"
    tag = uuid.uuid4().hex[:8]
    about = f"The petrel{tag} release branch is cut on Tuesdays"
    unrelated = "The office plants are watered by whoever is in first"
    with plur.reader(home) as writer:
        for statement in (about, unrelated):
            assert not writer.call("plur_learn", {"statement": statement}).is_error
    tmg.write_config(plur.config(home, learn="off"))
    llm.enqueue(Text("On Tuesdays."))
    r = tmg.run("-r", f"how is the petrel{tag} release branch cut?", env=tmg.env(memory=True), timeout=90)
    assert r.code == 0, r.err
    notes = notes_part(llm.requests[-1]).splitlines()
    assert f"- {about}" in notes and f"- {unrelated}" not in notes, notes
