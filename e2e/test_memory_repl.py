"""Memory in the interactive chat: the real tmg in tmux, against the mock API and fakeplur.

Each way a session ends (Ctrl-D, /exit, SIGTERM) flushes the batch exactly once: fakeplur's
call log shows one plur_learn_batch carrying every answer. A LEARN change saved mid-session
applies from the next prompt; /memory shows what was recalled, the tier and the write health.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from e2e.mock_llm import Text
from e2e.plur import FakePlur
from e2e.tmux import Terminal, flat, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

PROMPT = r"default · openai/mock-model >"
SEED = "Always tag releases of the heron project with a date"


@pytest.fixture
def term():
    t = Terminal(width=160, height=40)
    yield t
    t.close()


@pytest.fixture
def plur(tmp_path) -> FakePlur:
    return FakePlur(tmp_path)


def wait_until(check, seconds: float = 60.0) -> None:
    """Poll ``check`` (a bound for a loaded machine, where the suite runs a test per core)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def prompts(screen: str) -> int:
    return screen.count("default · openai/mock-model >")


def ask(term: Terminal, text: str, answer: str) -> None:
    """Ask, and wait until the answer is shown and the turn is over (the next prompt is drawn)."""
    before = prompts(term.scrollback())
    term.ask(text)
    term.wait_for(answer)
    term.wait_for(lambda s: prompts(s) > before, scrollback=True)


@pytest.mark.parametrize("ending", ["ctrl-d", "/exit", "sigterm"])
def test_each_way_of_ending_flushes_the_batch_exactly_once(term, tmg, llm, plur, ending):
    tmg.write_config(plur.config(learn="batch"))
    llm.enqueue(Text("The first answer."), Text("The second answer."))
    term.start_tmg(tmg, prompt=PROMPT, memory=True)
    ask(term, "first question", "The first answer.")
    ask(term, "second question", "The second answer.")
    if ending == "ctrl-d":
        term.send("C-d")
    elif ending == "/exit":
        term.ask("/exit")
    else:
        os.kill(term.pid(), signal.SIGTERM)
    assert term.exit_status() == (130 if ending == "sigterm" else 0)
    (batch,) = plur.calls("plur_learn_batch")
    sent = [e["statement"] for e in FakePlur.payload(batch)["engrams"]]
    assert sent == ["The first answer.", "The second answer."] and not batch["is_error"]
    assert sorted(plur.statements()) == ["The first answer.", "The second answer."]


def test_learn_saved_from_off_to_batch_mid_session_applies_from_the_next_prompt(term, tmg, llm, plur):
    tmg.write_config(plur.config(learn="off"))
    llm.enqueue(Text("Said while learning was off."), Text("Said once learning was on."))
    term.start_tmg(tmg, prompt=PROMPT, memory=True)
    ask(term, "one", "Said while learning was off.")
    tmg.write_config(plur.config(learn="batch"))
    term.wait_for(lambda s: flat("MEMORY.LEARN 'off' -> 'batch'") in flat(s))  # after the config's path
    ask(term, "two", "Said once learning was on.")
    term.ask("/exit")
    assert term.exit_status() == 0
    assert plur.statements() == ["Said once learning was on."]


def test_memory_shows_what_was_recalled_the_tier_and_the_write_health(term, tmg, llm, plur):
    tmg.write_config(plur.config(learn="capture", seed=[SEED]))
    llm.enqueue(Text("Use the date, e.g. heron-2026-05-01."))
    term.start_tmg(tmg, prompt=PROMPT, memory=True)
    ask(term, "how do I tag releases of the heron project?", "heron-2026-05-01")
    (engram,) = plur.engrams()
    wait_until(lambda: plur.episodes())  # the capture is detached: the prompt never waits for it
    # The store has it a moment before tmg has the answer back (through the broker): ask again until then.
    deadline = time.monotonic() + 20
    while True:
        term.ask("/memory")
        try:
            screen = term.wait_for("plur_capture: 1 attempt", timeout=1)
            break
        except AssertionError:
            assert time.monotonic() < deadline, "the capture never showed in /memory"
    assert "memory: on · server plur: ready, tools through plur_admin" in screen
    assert flat("last request (prompt 1): 1 item(s) from memory went with it") in flat(screen)
    assert flat(f"1. {engram['id']} · recalled for this prompt's words · scope global · under the notes from earlier "
                f"sessions: {SEED}") in flat(screen)
    assert "learning: capture" in screen
    assert "plur_capture: 1 attempt(s), 0 failed" in screen
    term.send("C-d")
    assert term.exit_status() == 0


def test_memory_add_then_forget_n_of_the_last_request(term, tmg, llm, plur):
    tmg.write_config(plur.config(learn="full"))
    llm.enqueue(Text("Bonjour."), Text("Fine."))
    term.start_tmg(tmg, prompt=PROMPT, memory=True)
    term.ask("/memory add From now on, always answer in French")
    term.wait_for("pinned \\(injected for every prompt, as your instruction\\): ENG-")
    (engram,) = plur.engrams()
    assert engram["pinned"] and engram["statement"] == "From now on, always answer in French"
    ask(term, "hello", "Bonjour.")
    assert "From now on, always answer in French" in str(llm.requests[-1]["messages"])
    term.ask("/memory")
    screen = flat(term.wait_for("forgets item N"))
    assert flat(f"1. {engram['id']} · pinned (sent with every prompt) · scope global · under your standing "
                "instructions: From now on, always answer in French") in screen
    term.ask("/memory forget 1")
    term.wait_for(f"forgotten: {engram['id']}  From now on, always answer in French")
    assert plur.engrams()[0]["status"] == "retired"
    ask(term, "and now?", "Fine.")
    assert "answer in French" not in str(llm.requests[-1]["messages"])
    term.send("C-d")
    assert term.exit_status() == 0


def test_new_ends_the_first_session_through_its_own_end_and_the_second_flushes_its_own(term, tmg, llm, plur):
    tmg.write_config(plur.config(learn="batch"))
    llm.enqueue(Text("Answer in the first session."), Text("Answer in the second session."))
    term.start_tmg(tmg, prompt=PROMPT, memory=True)
    ask(term, "one", "Answer in the first session.")
    term.ask("/new")
    term.wait_for("new session")
    ask(term, "two", "Answer in the second session.")
    term.send("C-d")
    assert term.exit_status() == 0
    batches = [FakePlur.payload(c)["engrams"] for c in plur.calls("plur_learn_batch")]
    assert [[e["statement"] for e in b] for b in batches] == [["Answer in the first session."],
                                                            ["Answer in the second session."]]
    tags = [b[0]["tags"][0] for b in batches]
    assert tags[0] != tags[1] and {t.removeprefix("session:") for t in tags} == {s.name for s in tmg.session_dirs()}
