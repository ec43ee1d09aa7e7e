"""The real-model leg: the real tmg against a real model server no one here wrote.

llama-cpp-python's OpenAI-compatible server, serving SmolLM2-135M-Instruct (see e2e/realmodel.py),
is strict where the mock of OpenAI was lenient: it rejects ``content: null``, streams an empty
200 when the prompt overflows its window, sends no usage, and its chat template expects
alternating roles. Answers are not asserted word for word (the model is tiny); what tmg does with
them is. Under CI=true nothing here skips: a missing piece fails, saying what is missing.
"""

from __future__ import annotations

import json
import re

import pytest

from e2e import realmodel
from e2e.conftest import TmgRunner
from e2e.plur import FakePlur, instructions_part, notes_part
from e2e.tmux import Terminal, tmux_available
from tmg.memory.framing import INSTRUCTIONS_HEADING, NOTES_HEADING

pytestmark = pytest.mark.realmodel

PROMPT = r"^default · openai/smollm2 >"


@pytest.fixture(scope="session")
def real_server(tmp_path_factory):
    problem = realmodel.missing()
    if problem:
        if realmodel.env_says_ci():
            pytest.fail(f"the real-model leg cannot run: {problem}")
        pytest.skip(problem)
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with realmodel.LlamaServer(n_ctx=2048, log=log) as server, realmodel.ToolChoiceProxy(server.url) as proxy:
        yield proxy


@pytest.fixture
def proxy(real_server):
    real_server.force_tool = None
    real_server.pace = 0.0
    real_server.requests.clear()
    return real_server


@pytest.fixture
def tmg(tmp_path, proxy) -> TmgRunner:
    runner = TmgRunner(tmp_path, proxy)
    runner.config.write_text(
        "PROVIDERS:\n"
        "  local:\n"
        "    MODEL: openai/smollm2\n"
        f"    URL: {proxy.url}\n"
        "    API_KEY: ${MOCK_API_KEY}\n"
        "    MAX_TOKENS: 48\n"  # a bounded answer keeps the leg short on a slow machine
    )
    return runner


def _set_max_tokens(tmg: TmgRunner, n: int) -> None:
    tmg.config.write_text(re.sub(r"MAX_TOKENS: \d+", f"MAX_TOKENS: {n}", tmg.config.read_text()))


def _roles(body: dict) -> list[str]:
    return [m["role"] for m in body["messages"] if m["role"] != "system"]


def _alternates(roles: list[str]) -> bool:
    """No two user or two assistant messages in a row (tool results sit between turns)."""
    return all(not (a == b and a in ("user", "assistant")) for a, b in zip(roles, roles[1:]))


def test_one_shot_answers_and_the_transcript_shows_unknown_usage(tmg, proxy):
    r = tmg.run("Say hello in one short sentence.", timeout=180)
    assert r.code == 0, r.err
    assert r.out.strip()
    transcript = tmg.run("-t").out
    assert "tokens unknown" in transcript and "0 in / 0 out" not in transcript


def test_piped_question(tmg, proxy):
    r = tmg.run(stdin="What is the capital of France?\n", timeout=180)
    assert r.code == 0, r.err
    assert r.out.strip()
    assert proxy.requests[-1]["messages"][-1] == {"role": "user", "content": "What is the capital of France?"}


def test_a_forced_tool_call_turn_then_a_normal_prompt_in_the_same_session(tmg, proxy):
    (tmg.work / "notes.txt").write_text("the password is swordfish\n")
    proxy.force_tool = "read_file"
    r = tmg.run("Read the file notes.txt and tell me the password.", timeout=240)
    assert r.code == 0, r.err
    assert "read_file" in r.err  # the tool ran (stderr tool line)
    assert len([line for line in r.err.splitlines() if "read_file" in line]) == 1
    proxy.force_tool = None
    r = tmg.run("Thank you. Say goodbye.", timeout=240)
    assert r.code == 0, r.err
    assert r.out.strip()
    last = proxy.requests[-1]
    call = [m for m in last["messages"] if m.get("tool_calls")][0]
    assert call["content"] == ""
    assert _roles(last)[:3] == ["user", "assistant", "tool"] and _alternates(_roles(last))


def test_an_over_long_prompt_fails_once_then_a_normal_prompt_works(tmg, proxy):
    r = tmg.run("Summarise: " + "word " * 3000, timeout=240)
    assert r.code == 1
    lines = r.err.strip().splitlines()
    assert lines[-1].startswith("tmg: error:") and "empty stream" in lines[-1], r.err
    assert "broke off" not in r.err and "retry" not in r.err
    assert len(proxy.requests) == 2  # once, then once after compaction
    r = tmg.run("Say hi.", timeout=240)
    assert r.code == 0, r.err
    assert r.out.strip()
    assert _roles(proxy.requests[-1]) == ["user"]  # the failed prompt is not sent again


def test_with_memory_on_the_model_answers_the_question_and_copies_no_memory_text(tmg, proxy, tmp_path):
    """Issue 21 item 6: a small model reads memory's two parts (the user's instructions at the end
    of the system message, a recalled note beside the question) and still answers the question,
    without printing markup or either heading (it printed `[/PLUR-MEMORY]` from the old fence)."""
    plur = FakePlur(tmp_path)
    seed = [{"statement": "Always answer in English.", "pinned": True},
            {"statement": "The user is planning a trip to the capital of France in May."}]
    tmg.config.write_text(tmg.config.read_text() + plur.entry(seed=seed))
    r = tmg.run("What is the capital of France?", env=tmg.env(memory=True), timeout=240)
    assert r.code == 0, r.err
    sent = proxy.requests[-1]
    assert instructions_part(sent).endswith("- Always answer in English.")  # memory was on, both parts went
    assert "capital of France in May" in notes_part(sent)
    assert "paris" in r.out.lower(), r.out
    copied = [text for text in (INSTRUCTIONS_HEADING, NOTES_HEADING, "PLUR", "[/", "##", "remembered by tmg")
              if text.lower() in r.out.lower()]
    assert copied == [], r.out


def test_max_tokens_8_says_the_answer_was_cut_off(tmg, proxy):
    _set_max_tokens(tmg, 8)
    r = tmg.run("Write a long poem about the sea.", timeout=180)
    assert r.code == 0, r.err
    assert r.out.strip()
    assert proxy.requests[-1]["max_tokens"] == 8
    assert "cut off at the token limit" in r.err
    assert "cut off at the token limit" in tmg.run("-t").out


@pytest.fixture
def term():
    if not tmux_available():
        if realmodel.env_says_ci():
            pytest.fail("tmux is not installed (scripts/bootstrap --test installs it)")
        pytest.skip("tmux is not installed")
    t = Terminal(width=100, height=40)
    yield t
    t.close()


def _launch(term: Terminal, tmg: TmgRunner) -> None:
    term.start_tmg(tmg, prompt=PROMPT, timeout=60)


def _ask(term: Terminal, text: str) -> None:
    term.ask(text)


def _prompts(screen: str) -> int:
    return len(re.findall(PROMPT, screen, re.M))


def test_repl_answers_and_cost_says_usage_is_unknown(term, tmg, proxy):
    _launch(term, tmg)
    _ask(term, "Say hello.")
    term.wait_for(lambda s: _prompts(s) >= 2, timeout=180)
    _ask(term, "/cost")
    screen = term.wait_for(r"tokens unknown", timeout=30)
    assert "0 in / 0 out" not in screen
    _ask(term, "/exit")
    assert term.exit_status(timeout=60) == 0


def _answer_started(screen: str) -> bool:
    """Some answer text is on screen below the question (not only the waiting line)."""
    if "a dragon and a knight." not in screen:
        return False
    below = screen.split("a dragon and a knight.", 1)[1].splitlines()
    return len("".join(line for line in below if "waiting for the model" not in line).strip()) > 20


def test_ctrl_c_mid_answer_then_a_question(term, tmg, proxy):
    _set_max_tokens(tmg, 400)
    proxy.pace = 0.05  # about 20 tokens/s on screen: the answer is still coming when Ctrl-C arrives
    _launch(term, tmg)
    _ask(term, "Write a very long story about a dragon and a knight.")
    term.wait_for(_answer_started, timeout=180)
    term.send("C-c")
    term.wait_for("answer interrupted", timeout=60)
    proxy.pace = 0.0
    term.wait_for(lambda s: _prompts(s) >= 2, timeout=60)
    _set_max_tokens(tmg, 24)  # not hot: the REPL keeps 400; the question is short anyway
    _ask(term, "What is one plus one?")
    term.wait_for(lambda s: _prompts(s) >= 3, timeout=240)
    _ask(term, "/exit")
    assert term.exit_status(timeout=60) == 0
    last = proxy.requests[-1]
    roles = _roles(last)
    assert roles == ["user", "assistant", "user"] and _alternates(roles)
    kept = last["messages"][-2]["content"]
    assert kept.endswith("[answer interrupted by the user]") and len(kept) > len("[answer interrupted by the user]")
    stored = json.loads(tmg.run("-t", "--json").out)["messages"]
    assert stored[1]["meta"]["interrupted"] is True
