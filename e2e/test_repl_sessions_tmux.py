"""The chat's sessions, attachments and shell escapes in a real terminal (tmux): a second chat in the
same project starts beside the first, `--resume` alone picks from this project's sessions, `!command`
runs under the permission engine and its output goes with the next prompt, Tab completes `@path`."""

from __future__ import annotations

import re

import pytest

from e2e.mock_llm import Text
from e2e.tmux import PROMPT, Terminal, flat, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]


@pytest.fixture
def term(tmg):
    t = Terminal(width=120, height=30)
    yield t
    t.close()


def prompts(screen: str) -> int:
    return len(re.findall(PROMPT, screen, re.M))


def user_texts(request) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_a_second_chat_in_the_same_project_starts_beside_the_first(term, tmg, llm):
    llm.enqueue(Text("first chat's answer"), Text("second chat's answer"))
    first = re.search(r"session (\S+) \(new\)", term.start_tmg(tmg)).group(1)
    term.ask("in the first chat")
    term.wait_for(r"first chat's answer")
    term.wait_for(lambda s: prompts(s) == 2)
    other = Terminal(width=120, height=30)
    try:
        screen = other.start_tmg(tmg)
        said = flat(f"session {first} is open in another tmg; this chat goes on in a side session ")
        side = re.search(re.escape(said) + r"([\d-]+[0-9a-f]{4})\(tmg-t\1\)", flat(screen)).group(1)
        assert re.search(rf"session {side} \(new\)", screen)
        other.ask("in the second chat")
        other.wait_for(r"second chat's answer")
        assert user_texts(llm.requests[1]) == ["in the second chat"]  # nothing of the first chat
        other.ask("/exit")
        assert other.exit_status() == 0
    finally:
        other.close()
    term.ask("/exit")
    assert term.exit_status() == 0
    assert "in the first chat" in tmg.run("-t").out  # the first one is still the project's current


def test_resume_alone_picks_one_of_this_projects_sessions(term, tmg, llm):
    llm.enqueue(Text("tides answer"), Text("stars answer"), Text("back to tides"))
    assert tmg.run("-r", "the old one about tides").code == 0
    assert tmg.run("--new", "-r", "a newer one about stars").code == 0
    term.start_tmg(tmg, "--resume", prompt=r"resume which\?")
    screen = term.wait_for(r"^resume · number >", timeout=20)
    listed = [line for line in screen.splitlines() if re.match(r"\s+\d\. \d{8}-", line)]
    assert len(listed) == 2 and "a newer one about stars" in listed[0] and "the old one about tides" in listed[1]
    term.ask("2")
    term.wait_for(r"\(resumed, 2 messages\)")
    term.wait_for(PROMPT)
    term.ask("and the moon?")
    term.wait_for(r"back to tides")
    assert user_texts(llm.requests[-1]) == ["the old one about tides", "and the moon?"]
    term.ask("/exit")
    assert term.exit_status() == 0


def test_a_shell_escape_asks_runs_and_its_output_goes_with_the_next_prompt(term, tmg, llm):
    llm.enqueue(Text("I see the marker."))
    term.start_tmg(tmg)
    term.ask("!touch made-4711 && echo marker-4711")  # it writes: it asks (a read-only one would not)
    term.wait_for(r"tmg asks: shell wants to run \(running a command asks by default\)")
    term.wait_for(r"allow\? \[y/s/a/n/m\]")
    term.ask("y")  # with Enter: a one-key answer takes the Enter as an empty next entry
    term.wait_for(r"^marker-4711$")
    term.wait_for(r"its output goes with your next prompt")
    assert llm.requests == []  # nothing sent yet
    term.ask("what did it print?")
    term.wait_for(r"I see the marker\.")
    sent = user_texts(llm.requests[0])[-1]
    assert sent.startswith("what did it print?\n\n--- output of `touch made-4711 && echo marker-4711` (a command the "
                           "user ran with !) ---")
    assert "exit code: 0\nstdout:\nmarker-4711\n--- end of output ---" in sent
    term.ask("/exit")
    assert term.exit_status() == 0


def test_a_denied_shell_escape_does_not_run(term, tmg, llm):
    tmg.write_config("PERMISSIONS:\n  DENY: [shell(touch)]\n")
    term.start_tmg(tmg)
    term.ask("!touch made-by-escape")
    term.wait_for(r"!touch made-by-escape did not run; nothing goes with the next prompt")
    assert not (tmg.work / "made-by-escape").exists()
    term.ask("/exit")
    assert term.exit_status() == 0


def test_tab_completes_an_at_path_and_the_file_is_attached(term, tmg, llm):
    (tmg.work / "notes-for-tab.md").write_text("the meeting moved to Friday\n")
    llm.enqueue(Text("Friday it is."))
    term.start_tmg(tmg)
    term.type("read @notes-for")
    term.send("Tab")
    term.wait_for(r"read @notes-for-tab\.md")
    term.send("Enter")
    term.wait_for(r"Friday it is\.")
    sent = user_texts(llm.requests[0])[-1]
    assert sent.startswith("read @notes-for-tab.md\n\n--- file @notes-for-tab.md (")
    assert "the meeting moved to Friday" in sent
    term.ask("/exit")
    assert term.exit_status() == 0
