"""The interactive chat in a real terminal: the real ``tmg`` driven through tmux, against the mock API.

The screen is polled with a bounded wait (never a blind sleep); nothing asserts on time.
"""

from __future__ import annotations

import os
import re
import signal

import pytest

from e2e.conftest import API_KEY
from e2e.mock_llm import Text
from e2e.tmux import Terminal, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

PROMPT = r"^default · openai/mock-model >"
ANSWER = (
    "# Rivers\n\n"
    "The three longest rivers are listed below, with a short note on each of them so that "
    "this paragraph wraps over more than one line of the terminal.\n\n"
    "- the Nile, in Africa\n"
    "- the Amazon, in South America\n"
    "- the Yangtze, in Asia\n\n"
    "```python\nlongest = 'Nile'\n```\n\n"
    "That is all about rivers."
)
ANSWER_LINES = ["Rivers", "the Nile, in Africa", "the Amazon, in South America", "the Yangtze, in Asia",
                "longest = 'Nile'", "That is all about rivers."]


@pytest.fixture
def term(tmg):
    t = Terminal(width=100, height=30)
    yield t
    t.close()


def prompts(screen: str) -> int:
    return len(re.findall(PROMPT, screen, re.M))


def test_prompt_appears_and_a_streamed_answer_shows_each_line_once(term, tmg, llm):
    llm.enqueue(Text(ANSWER, chunks=60, chunk_delay=0.03, usage=(321, 45)))
    screen = term.start_tmg(tmg)
    assert "/help" in screen  # the greeting says where to start
    term.ask("which rivers are longest?")
    # While it streams, the start of the answer is on screen before its end.
    term.wait_for(lambda s: "Rivers" in s and "That is all about rivers." not in s)
    screen = term.wait_for(r"321 in / 45 out · ")
    term.wait_for(lambda s: prompts(s) == 2)
    full = term.scrollback()
    for line in ANSWER_LINES:
        assert full.count(line) == 1, f"{line!r} shown {full.count(line)} times:\n{full}"
    assert "# Rivers" not in full and "```" not in full  # rendered, not raw Markdown
    assert API_KEY not in full
    assert llm.requests[0]["messages"][-1]["content"] == "which rivers are longest?"


def test_single_line_breaks_are_kept_and_paragraphs_and_lists_still_render(term, tmg, llm):
    """As piped output keeps them (and chat front-ends do): a poem keeps its lines."""
    poem = "Roses are red,\nviolets are blue,\nline breaks are kept\n\nA paragraph.\n\n- one item\n- two items"
    llm.enqueue(Text(poem, chunks=6, chunk_delay=0.02))
    term.start_tmg(tmg)
    term.ask("a poem please")
    screen = term.wait_for(lambda s: prompts(s) == 2)
    assert re.search(r"^Roses are red,\n^violets are blue,\n^line breaks are kept\n\n^A paragraph\.\n\n"
                     r"^ • one item\n^ • two items$", screen, re.M), screen
    llm.enqueue(Text(poem))
    piped = tmg.run("-r", "the same poem")
    assert (piped.code, piped.out) == (0, poem + "\n")  # what a pipe gets: the same lines


def test_help_works_and_an_unknown_command_gets_a_suggestion(term, tmg, llm):
    term.start_tmg(tmg)
    term.ask("/help")
    term.wait_for(r"/exit\s+end the session")  # its last line: the whole list is printed
    shown = term.scrollback()  # the list is longer than a 24-line screen
    for name in ("/new", "/mode", "/model", "/cost", "/config", "/memory", "/transcript", "/rewind"):
        assert name in shown
    term.ask("/hepl")
    term.wait_for(r"did you mean /help\?")
    term.ask("/exit")
    assert term.exit_status() == 0
    assert llm.requests == []


def test_ctrl_c_cancels_a_slow_answer_and_the_session_goes_on(term, tmg, llm):
    words = " ".join(f"word{i}" for i in range(300))
    llm.enqueue(Text(words, chunks=150, chunk_delay=0.05), Text("The second answer."), Text("In the new session."))
    first = re.search(r"session (\S+) \(new\)", term.start_tmg(tmg)).group(1)
    term.ask("tell me a long story")
    term.wait_for(r"word1\d")
    term.send("C-c")
    term.wait_for(r"answer interrupted")
    assert llm.wait_outcome(0) == "client_closed"  # the HTTP stream was closed, not read to its end
    term.wait_for(lambda s: prompts(s) == 2)

    term.ask("and now?")
    term.wait_for(r"The second answer\.")
    assert llm.requests[1]["messages"][-1]["content"] == "and now?"

    term.ask("/new")
    term.wait_for(r"new session \d{8}-\d{6}-[0-9a-f]{4}")
    term.ask("fresh start")
    term.wait_for(r"In the new session\.")
    assert [m["content"] for m in llm.requests[2]["messages"] if m["role"] == "user"] == ["fresh start"]

    term.ask("/exit")
    assert term.exit_status() == 0

    assert len(tmg.session_dirs()) == 2
    shown = tmg.run("-t", first)
    assert shown.code == 0, shown.err
    assert "tell me a long story" in shown.out and "[interrupted]" in shown.out
    assert "word1" in shown.out and "word299" not in shown.out
    assert "and now?" in shown.out and "The second answer." in shown.out
    current = tmg.run("-t")
    assert "fresh start" in current.out and "tell me a long story" not in current.out


def test_ctrl_c_at_an_empty_prompt_says_how_to_quit_and_ctrl_d_quits(term, tmg, llm):
    term.start_tmg(tmg)
    term.send("C-c")
    term.wait_for(r"press Ctrl-D or type /exit to quit")
    term.send("C-d")
    assert term.exit_status() == 0


def test_input_history_survives_a_restart(term, tmg, llm):
    llm.enqueue(Text("first answer"))
    term.start_tmg(tmg)
    term.ask("a question worth repeating")
    term.wait_for(r"first answer")
    term.ask("/exit")
    assert term.exit_status() == 0
    term.close()

    again = Terminal()
    try:
        again.start_tmg(tmg)
        again.send("Up")  # the last entry first: /exit
        again.wait_for(PROMPT + r" /exit$")
        again.send("Up")
        again.wait_for(PROMPT + r" a question worth repeating$")
    finally:
        again.close()


def test_sigterm_ends_the_session_cleanly(term, tmg, llm):
    llm.enqueue(Text("an answer"), Text("after the restart"))
    term.start_tmg(tmg)
    term.ask("hello")
    term.wait_for(r"an answer")
    os.kill(term.pid(), signal.SIGTERM)
    assert term.exit_status() == 130
    # The session's lock was released: the next run resumes the same session at once.
    result = tmg.run("and again")
    assert result.code == 0, result.err
    assert [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "user"] == ["hello", "and again"]


def test_a_question_typed_during_an_answer_is_kept_for_the_next_prompt(term, tmg, llm):
    llm.enqueue(Text("alpha " * 60 + "omega", chunks=40, chunk_delay=0.04), Text("The typed-ahead answer."))
    term.start_tmg(tmg)
    term.ask("first")
    term.wait_for(r"alpha")
    term.ask("typed ahead")  # while the first answer still streams
    term.wait_for(r"The typed-ahead answer\.")
    assert llm.requests[1]["messages"][-1]["content"] == "typed ahead"  # sent by its Enter, as one line
    full = term.scrollback()
    assert full.count("typed ahead") == 1  # not echoed into the streaming answer, shown once at its prompt
    assert re.search(PROMPT + r" typed ahead$", full, re.M)


def test_ctrl_r_enter_takes_the_match_into_the_line(term, tmg, llm):
    llm.enqueue(Text("first answer"), Text("the recalled answer"))
    term.start_tmg(tmg)
    term.ask("a question about rivers")
    term.wait_for(r"first answer")
    term.wait_for(lambda s: prompts(s) == 2)
    term.send("C-r")
    term.type("rivers")
    term.wait_for(r"I-search backward: rivers")
    term.send("Enter")  # takes the match into the line (it used to clear the line)
    term.wait_for(lambda s: "I-search" not in s and re.search(PROMPT + r" a question about rivers$", s, re.M))
    term.send("Enter")  # and a second Enter sends it
    term.wait_for(r"the recalled answer")
    assert llm.requests[1]["messages"][-1]["content"] == "a question about rivers"


def test_ctrl_c_leaves_a_ctrl_r_search_and_the_prompt_takes_keys(term, tmg, llm):
    llm.enqueue(Text("first answer"), Text("after the search"))
    term.start_tmg(tmg)
    term.ask("a question about rivers")
    term.wait_for(r"first answer")
    term.wait_for(lambda s: prompts(s) == 2)
    term.send("C-r")
    term.type("rivers")
    term.wait_for(r"I-search backward: rivers")
    term.send("C-c")  # it used to freeze the REPL for good
    term.wait_for(lambda s: "I-search" not in s)
    term.send("C-u")
    term.ask("still alive?")
    term.wait_for(r"after the search")
    assert llm.requests[1]["messages"][-1]["content"] == "still alive?"
    term.send("C-d")
    assert term.exit_status() == 0


def test_a_one_shot_while_a_chat_is_open_answers_in_a_side_session(term, tmg, llm):
    llm.enqueue(Text("the chat's answer"), Text("the one-shot's answer"), Text("the chat goes on"))
    chat_id = re.search(r"session (\S+) \(new\)", term.start_tmg(tmg)).group(1)
    term.ask("first in the chat")
    term.wait_for(r"the chat's answer")
    term.wait_for(lambda s: prompts(s) == 2)

    r = tmg.run("a quick question from another terminal")
    assert r.code == 0 and r.out.strip() == "the one-shot's answer", r.err
    (line,) = r.err.splitlines()
    side = re.fullmatch(rf"tmg: session {chat_id} is open in another tmg; this answer goes to a side session "
                        r"(\S+) \(tmg -t \1\)", line).group(1)
    assert [m["content"] for m in llm.requests[1]["messages"] if m["role"] == "user"] == [
        "a quick question from another terminal"]

    term.ask("and the chat again")
    term.wait_for(r"the chat goes on")
    assert [m["content"] for m in llm.requests[2]["messages"] if m["role"] == "user"] == [
        "first in the chat", "and the chat again"]  # the chat's session saw nothing of the one-shot
    term.ask("/exit")
    assert term.exit_status() == 0
    assert "a quick question" in tmg.run("-t", side).out
    chat = tmg.run("-t")  # the chat's session is still the mode's current one
    assert "and the chat again" in chat.out and "a quick question" not in chat.out


def test_a_waiting_line_shows_until_the_first_token_and_is_cleared_before_the_answer(term, tmg, llm):
    llm.enqueue(Text("The slow answer arrived.", delay=3))
    term.start_tmg(tmg)
    term.ask("take your time")
    term.wait_for(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for the model · \ds")
    screen = term.wait_for(r"The slow answer arrived\.")
    term.wait_for(lambda s: prompts(s) == 2)
    full = term.scrollback()
    assert "waiting for the model" not in full  # wiped, not left above the answer
    assert re.search(r"^The slow answer arrived\.$", full, re.M)


def test_no_waiting_line_goes_into_a_pipe(tmg, llm):
    llm.enqueue(Text("piped answer", delay=1))
    r = tmg.run("a question")
    assert (r.code, r.out, r.err) == (0, "piped answer\n", "")
