"""Memory end to end: the real `tmg` one-shot against the mock API and fakeplur (memory.md §8).

Every assertion is on what the server stored or was sent (its store and call log), what the
model was sent (the mock's requests), or what the user sees (stdout, stderr, the transcript).
"""

from __future__ import annotations

import json
import time

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.plur import FakePlur, instructions_part, memory_blocks, notes_part, system_text
from tmg.memory.injector import INSTRUCTIONS_HEADING, NOTES_HEADING

SEED = "Never deploy the zebrafish service on Fridays"
BATCH_DEAD = "plur_learn_batch failing — learning is disabled"


@pytest.fixture
def plur(tmp_path) -> FakePlur:
    return FakePlur(tmp_path)


def eventually(check, seconds: float = 30.0) -> bool:
    """Poll ``check``: a one-shot may leave its last write to the broker as it exits (P4)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def run(tmg, *args, **env):
    return tmg.run("-r", *args, env=tmg.env(memory=True, **env))


def session_id(tmg) -> str:
    (session,) = tmg.session_dirs()
    return session.name


def transcript(tmg) -> str:
    (session,) = tmg.session_dirs()
    return (session / "transcript.md").read_text()


def history(tmg) -> list[dict]:
    (session,) = tmg.session_dirs()
    return [json.loads(line) for line in (session / "history.jsonl").read_text().splitlines()]


@pytest.mark.in_process
def test_capture_stores_each_answer_as_an_episode_and_nothing_else(tmg, llm, plur):
    tmg.write_config(plur.config(learn="capture"))
    llm.enqueue(Text("Use git revert for a pushed commit."), Text("Then push again."))
    assert run(tmg, "undo a pushed commit?").code == 0
    assert run(tmg, "and then?").code == 0
    episodes = plur.episodes()
    assert [e["summary"] for e in episodes] == ["Use git revert for a pushed commit.", "Then push again."]
    assert {(e["agent"], e["session_id"]) for e in episodes} == {("default", session_id(tmg))}
    assert plur.engrams() == [] and plur.calls("plur_learn_batch") == [] and plur.calls("plur_learn") == []


@pytest.mark.in_process
def test_batch_lands_the_sessions_answers_in_one_call_at_its_end(tmg, llm, plur):
    tmg.write_config(plur.config(learn="batch"))
    llm.enqueue(ToolCall("list_folder", {"path": "."}), Text("There are no files here."))
    r = run(tmg, "what is in this folder?")
    assert r.code == 0, r.err
    (batch,) = plur.calls("plur_learn_batch")
    assert FakePlur.payload(batch) == {
        "engrams": [{"statement": "There are no files here.",
                     "tags": [f"session:{session_id(tmg)}", "mode:default", "origin:answer"],
                     "source": "tmg: a model's answer (may be wrong)"}],
        "max_llm_calls": 0,
    }
    assert plur.statements() == ["There are no files here."]
    assert plur.episodes() == [] and plur.calls("plur_capture") == [] and plur.calls("plur_learn") == []


@pytest.mark.in_process
def test_full_pins_the_users_instruction_and_writes_no_answer(tmg, llm, plur):
    tmg.write_config(plur.config(learn="full"))
    llm.enqueue(Text("Understood: tabs are out."), Text("Sea foam in moonlight."))
    instruction = "From now on, never indent YAML with tabs (marker QX17)"
    assert run(tmg, instruction).code == 0
    assert run(tmg, "--new", "write a haiku about the sea").code == 0
    (learn,) = plur.calls("plur_learn")
    assert FakePlur.payload(learn)["statement"] == instruction and FakePlur.payload(learn)["pinned"] is True
    # One engram: the user's own words. The answers are not written at all (tmg's history keeps them).
    assert plur.statements() == [instruction] and plur.engrams()[0]["pinned"] is True
    assert plur.episodes() == [] and plur.calls("plur_capture") == [] and plur.calls("plur_learn_batch") == []
    # The pinned instruction came back for an unrelated prompt, in words, under the instructions
    # heading, at the end of the system message.
    assert memory_blocks(llm.requests[-1]) == [f"{INSTRUCTIONS_HEADING}\n- {instruction}"]
    assert instructions_part(llm.requests[-1]) == f"{INSTRUCTIONS_HEADING}\n- {instruction}"


@pytest.mark.in_process
def test_a_recalled_note_rides_with_every_turn_of_its_prompt_once_and_not_again_while_recent(tmg, llm, plur):
    tmg.write_config(plur.config(learn="off", seed=[SEED]))
    llm.enqueue(ToolCall("list_folder", {"path": "."}), ToolCall("list_folder", {"path": "."}),
                Text("Not on a Friday."), Text("Still not on a Friday."))
    assert run(tmg, "can I deploy the zebrafish service today, a Friday?").code == 0
    assert run(tmg, "and the zebrafish service next Friday?").code == 0
    assert len(llm.requests) == 4
    for request in llm.requests[:3]:  # the first prompt's three model calls (two tool rounds)
        assert memory_blocks(request) == [notes_part(request)] and SEED in notes_part(request), request
        assert NOTES_HEADING not in system_text(request)
    # The next one-shot of the session recalls it again: the model server read it a prompt ago,
    # so nothing new rides with the user's turn (what rides there is re-read on every prompt).
    assert memory_blocks(llm.requests[3]) == []
    (engram,) = plur.engrams()
    assert len(plur.calls("plur_inject_hybrid")) == 2  # once per prompt, not per tool iteration
    answers = [m for m in history(tmg) if m["role"] == "assistant"]
    assert [m["meta"]["memory_ids"] for m in answers] == [[engram["id"]]] * 3 + [[]]
    assert transcript(tmg).count(f"memory: recalled {engram['id']}") == 1


@pytest.mark.in_process
def test_a_rejected_batch_names_exactly_that_tool_injection_goes_on_and_the_next_session_lands_it(tmg, llm, plur):
    tmg.write_config(plur.config(learn="batch", seed=[SEED], reject=("plur_learn_batch",)))
    llm.enqueue(Text("Fridays are for reading logs."))
    r = run(tmg, "what about the zebrafish service on Fridays?")
    assert r.code == 0 and r.out == "Fridays are for reading logs.\n"
    notices = [line for line in r.err.splitlines() if "memory write failures" in line]
    assert notices == [f"tmg: memory write failures: 1; {BATCH_DEAD}"]
    assert r.err.count(BATCH_DEAD) == 1
    assert f"memory write failures: 1; {BATCH_DEAD}" in transcript(tmg)
    assert SEED in memory_blocks(llm.requests[0])[0]  # injection kept working
    assert plur.statements() == [SEED]

    tmg.write_config(plur.config(learn="batch"))  # the outage is over
    llm.enqueue(Text("Deploy on Monday."))
    r = run(tmg, "so when do I deploy the zebrafish service?")
    assert r.code == 0 and "memory write failures" not in r.err
    assert eventually(lambda: sorted(plur.statements()) == sorted([SEED, "Fridays are for reading logs.", "Deploy on Monday."]))
    assert [c["is_error"] for c in plur.calls("plur_learn_batch")] == [True, False, False]  # spool first


@pytest.mark.in_process
def test_a_rejected_capture_names_only_plur_capture(tmg, llm, plur):
    tmg.write_config(plur.config(learn="capture", reject=("plur_capture",)))
    llm.enqueue(Text("An answer."))
    r = run(tmg, "a question")
    assert r.code == 0
    notices = [line for line in r.err.splitlines() if "memory write failures" in line]
    assert notices == ["tmg: memory write failures: 1; plur_capture failing — learning is disabled"]
    assert "plur_learn_batch" not in r.err and plur.episodes() == []


@pytest.mark.in_process
def test_a_rejected_inject_never_puts_error_text_in_the_prompt(tmg, llm, plur):
    tmg.write_config(plur.config(learn="batch", seed=[SEED], reject=("plur_inject_hybrid",)))
    llm.enqueue(Text("Answered without memory."))
    r = run(tmg, "zebrafish service on Fridays?")
    assert r.code == 0 and r.out == "Answered without memory.\n"
    (request,) = llm.requests
    sent = json.dumps(request["messages"])
    assert memory_blocks(request) == [] and "rejected" not in sent and "FAKE_PLUR" not in sent
    assert len(plur.calls("plur_inject_hybrid")) == 1
    assert "memory write failures" not in r.err  # injection failures never count as write failures
    assert eventually(lambda: "Answered without memory." in plur.statements())  # landed, maybe after the exit
    # ... but a failed recall is never silent: one notice, on stderr and in the transcript
    (said,) = [line for line in r.err.splitlines() if "recall failed" in line]
    assert said.startswith("tmg: memory: recall failed (plur_inject_hybrid: ") and said.endswith("answering without it")
    assert "memory: recall failed (plur_inject_hybrid: " in transcript(tmg)


def test_memory_enabled_by_a_save_mid_run_without_a_server_is_a_quiet_no_op(tmg, llm, plur):
    import re
    import threading
    import time

    tmg.write_config(plur.entry() + "MEMORY:\n  ENABLED: false\n")
    llm.enqueue(ToolCall("list_folder", {"path": "."}, delay=0.5), Text("Done without memory."))
    out: list = []
    worker = threading.Thread(target=lambda: out.append(run(tmg, "list it", TMG_DEBUG="1")), daemon=True)
    worker.start()
    deadline = time.monotonic() + 30
    while not llm.requests:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    tmg.write_config(plur.entry() + "MEMORY:\n  ENABLED: true\n")
    worker.join(60)
    (r,) = out
    assert r.code == 0 and r.out == "Done without memory.\n", r.err
    assert "MEMORY.ENABLED false -> true" in r.err
    # (with memory off at the start, the plur entry is an MCP tool server, still starting: it says so)
    err = re.sub(r"tmg: warning: MCP server plur is still starting after [\d.]+ s; its tools are not offered "
                 r"with this prompt\n", "", r.err)
    assert "no live memory server" in err and "warning" not in err and "Traceback" not in err
    assert [memory_blocks(q) for q in llm.requests] == [[], []] and plur.calls() == []


@pytest.mark.in_process
def test_debug_on_the_command_line_shows_memorys_debug_lines_as_tmg_debug_does(tmg, llm, plur):
    tmg.write_config(plur.config(learn="off"))
    llm.enqueue(Text("Quiet."), Text("Detailed."))
    quiet = run(tmg, "a question")
    assert quiet.code == 0 and "memory server 'plur' ready" not in quiet.err
    r = run(tmg, "--debug", "a question")
    assert r.code == 0 and r.out == "Detailed.\n", r.err
    assert "memory server 'plur' ready" in r.err
