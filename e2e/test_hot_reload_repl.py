"""Hot reload in the interactive chat: the real tmg in tmux, its config saved between prompts.

The watcher thread reports a save while tmg waits at the prompt; the next prompt uses it.
Screens are polled with a bounded wait; nothing asserts on time.
"""

from __future__ import annotations

import os

import pytest

from e2e.mock_llm import Text
from e2e.tmux import Terminal, flat, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

PROMPT = r"default · openai/mock-model >"


@pytest.fixture
def term(tmg):
    t = Terminal(width=160, height=40)
    yield t
    t.close()



def system_text(request) -> str:
    first = request["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def test_a_changed_person_reaches_the_next_prompt_and_a_broken_save_is_survived(term, tmg, llm):
    tmg.write_config("PERSON: You are the first persona.\n")
    good = tmg.config.read_text()
    llm.enqueue(Text("First answer."), Text("Second answer."), Text("Third answer."))
    term.start_tmg(tmg, prompt=PROMPT)

    term.ask("one")
    term.wait_for("First answer.")
    tmg.config.write_text(good.replace("the first persona", "the second persona"))
    term.wait_for("config reloaded from")  # said while idle, by the watcher thread
    term.ask("two")
    term.wait_for("Second answer.")
    assert "the first persona" in system_text(llm.requests[0])
    assert "the second persona" in system_text(llm.requests[1])

    # Saved whole, by rename, as editors do: a truncate-then-write could be seen empty in between
    # (a broken save of its own, said as such), and the notice below is counted.
    broken = tmg.config.with_name("tmg.yaml.new")
    broken.write_text(good + "MAX_TURNS: [\n")
    os.replace(broken, tmg.config)
    # the failure, naming the file and line (however the notice wraps)
    term.wait_for(lambda s: flat("config reload failed") in flat(s) and flat("tmg.yaml line 8:") in flat(s))
    term.ask("three")
    term.wait_for("Third answer.")
    assert "the second persona" in system_text(llm.requests[2])  # the last good config goes on
    assert term.scrollback().count("config reload failed") == 1

    tmg.config.write_text(good.replace("the first persona", "the third persona"))
    term.wait_for(lambda s: flat("the third persona") in flat(s))  # however the notice wraps
    term.ask("/exit")
    assert term.exit_status() == 0


def test_a_save_said_while_typing_prints_above_the_prompt_and_keeps_the_typed_line(term, tmg, llm):
    tmg.write_config("PERSON: You are the first persona.\n")
    llm.enqueue(Text("Answered."))
    term.start_tmg(tmg, prompt=PROMPT)
    term.type("half a question")
    term.wait_for("half a question")
    tmg.write_config("PERSON: You are the second persona.\n")
    term.wait_for(r"^tmg: config reloaded from .*$")
    term.type(" and the rest")
    screen = term.wait_for(PROMPT + " half a question and the rest$")
    lines = screen.splitlines()
    notice = next(i for i, line in enumerate(lines) if line.startswith("tmg: config reloaded"))
    prompt = next(i for i, line in enumerate(lines) if "half a question and the rest" in line)
    assert notice < prompt  # the notice above, the line being typed intact below it
    term.send("Enter")
    term.wait_for("Answered.")
    assert llm.requests[0]["messages"][-1]["content"] == "half a question and the rest"
    assert "the second persona" in system_text(llm.requests[0])
