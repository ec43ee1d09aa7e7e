"""Consent in a real terminal: the REPL asks before a tool changes anything, shows exactly what
will be sent, and "always" holds across a restart until /permissions revokes it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.tmux import Terminal, flat, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

REPO = Path(__file__).resolve().parent.parent
ECHO_SERVER = REPO / "tests" / "support" / "echo_mcp_server.py"
PROMPT = r"^default · openai/mock-model"


@pytest.fixture
def term(tmg):
    t = Terminal(width=120, height=40)
    yield t
    t.close()


def launch(term: Terminal, tmg, *args: str) -> str:
    tmg.write_config(f"MCP_SERVERS:\n  echo:\n    COMMAND: {sys.executable}\n    ARGS: [{ECHO_SERVER}]\n")
    return term.start_tmg(tmg, *args, prompt=PROMPT, TMG_MCP_WAIT="60")


def prompts(screen: str) -> int:
    return len(re.findall(PROMPT, screen, re.M))


def scribble(path: Path, text: str) -> ToolCall:
    return ToolCall("mcp_echo_scribble", {"path": str(path), "text": text})


def test_a_write_asks_showing_what_will_be_sent_always_persists_and_a_revoke_asks_again(term, tmg, llm):
    first, second, third = (tmg.root / f"{n}.txt" for n in ("first", "second", "third"))
    llm.enqueue(scribble(first, "hello there"), Text("wrote the first"))
    launch(term, tmg)
    term.ask("write the first")
    screen = term.wait_for(r"allow\? \[y/s/a/n/m\]")
    assert "tmg asks: mcp_echo_scribble wants to call (changing files asks by default)" in screen
    assert '"text": "hello there"' in screen  # exactly what the server will be sent
    assert '"this session" and "always" allow: mcp_echo_scribble' in screen
    assert not first.exists()
    term.type("a")
    term.wait_for("wrote the first")
    assert first.read_text() == "hello there"
    saved = json.loads((tmg.root / "xdg" / "tmg" / "permissions.json").read_text())
    assert [d["rule"] for d in saved["decisions"]] == ["mcp_echo_scribble"]
    term.wait_for(lambda s: prompts(s) == 2)
    term.ask("/exit")
    assert term.exit_status() == 0
    term.close()

    # A new tmg: the saved decision holds, nothing asks.
    again = Terminal(width=120, height=40)
    try:
        llm.enqueue(scribble(second, "two"), Text("wrote the second"))
        launch(again, tmg)
        again.ask("write the second")
        again.wait_for("wrote the second")
        assert "allow?" not in again.scrollback()
        assert second.read_text() == "two"
        again.ask("/permissions")
        screen = again.wait_for(r"1\. allow mcp_echo_scribble")
        again.ask("/permissions revoke 1")
        again.wait_for("revoked: allow mcp_echo_scribble")
        llm.enqueue(scribble(third, "three"), Text("did not write the third"))
        again.ask("write the third")
        again.wait_for(r"allow\? \[y/s/a/n/m\]")
        again.type("n")
        again.wait_for("did not write the third")
        assert not third.exists()
        assert llm.requests[-1]["messages"][-1]["content"].startswith("refused: the user declined mcp_echo_scribble")
        again.ask("/exit")
        assert again.exit_status() == 0
    finally:
        again.close()
    transcripts = "".join(p.read_text() for p in tmg.home.rglob("transcript.md"))
    assert "accepted always (saved mcp_echo_scribble)" in transcripts
    assert "mcp_echo_scribble allowed by rule mcp_echo_scribble" in transcripts
    assert "declined" in transcripts


def test_yolo_shows_on_the_prompt_line(term, tmg, llm):
    screen = launch(term, tmg, "--permissions", "yolo")
    assert re.search(r"^default · openai/mock-model · yolo >", screen, re.M), screen
    assert "yolo mode (--permissions): every tool call runs without asking" in screen


def plain(term: Terminal, tmg) -> str:
    tmg.write_config()
    return term.start_tmg(tmg, prompt=PROMPT)


def test_always_on_rm_notes_saves_only_that_and_rm_of_a_folder_outside_asks_and_it_survives(term, tmg, llm):
    notes, outside = tmg.work / "notes.txt", tmg.root / "outside"
    notes.write_text("old notes")
    outside.mkdir()
    (outside / "keep.txt").write_text("keep me")
    llm.enqueue(ToolCall("shell", {"command": "rm notes.txt"}), Text("removed the notes"))
    plain(term, tmg)
    term.ask("remove the notes")
    screen = term.wait_for(r"allow\? \[y/s/a/n/m\]")
    assert '"this session" and "always" allow: shell(rm notes.txt)' in screen  # shown before it is saved
    term.type("a")
    term.wait_for("removed the notes")
    assert not notes.exists()
    saved = json.loads((tmg.root / "xdg" / "tmg" / "permissions.json").read_text())
    assert [d["rule"] for d in saved["decisions"]] == ["shell(rm notes.txt)"]
    llm.enqueue(ToolCall("shell", {"command": f"rm -rf {outside}"}), Text("the model's next words"))
    term.ask("and the other folder")
    screen = term.wait_for(r"allow\? \[y/n/m\]")  # asked again: no "always" for a path outside
    assert flat(f'(no "always": {outside} is outside the working folder)') in flat(screen)
    term.type("n")
    term.wait_for("the model's next words")
    assert (outside / "keep.txt").read_text() == "keep me"
    assert llm.requests[-1]["messages"][-1]["content"].startswith("refused: the user declined shell")
    term.ask("/exit")
    assert term.exit_status() == 0


def test_one_key_answers_what_follows_is_the_next_prompt_and_a_new_files_content_is_shown(term, tmg, llm):
    llm.enqueue(ToolCall("write_file", {"path": "new.txt", "content": "hello there\nsecond line\n"}), Text("wrote it"))
    plain(term, tmg)
    term.ask("write new.txt")
    screen = term.wait_for(r"allow\? \[y/s/a/n/m\]")
    assert "new file new.txt, 2 lines:" in screen
    assert re.search(r"^\s+\+hello there$", screen, re.M) and re.search(r"^\s+\+second line$", screen, re.M)
    term.type("ynow write more")  # one key: y, and the rest is the next prompt's text, not sent
    term.wait_for("wrote it")
    assert (tmg.work / "new.txt").read_text() == "hello there\nsecond line\n"
    term.wait_for(PROMPT + r".*now write more$")
    assert len(llm.requests) == 2  # nothing more went to the model: the words wait for Enter
    term.send("C-u")
    term.ask("/exit")
    assert term.exit_status() == 0


def test_a_one_shot_on_a_terminal_says_it_does_not_ask_and_exits_1(term, tmg, llm):
    from e2e.conftest import tmg_command

    llm.enqueue(ToolCall("shell", {"command": "touch x"}), Text("I could not"))
    tmg.write_config()
    term.start(tmg_command() + ["make x"], tmg.env(LANG="C.UTF-8"), tmg.work)
    term.wait_for("I could not")
    assert term.exit_status() == 1
    text = flat(term.scrollback())
    assert flat("a one-shot does not ask (run tmg without a prompt to be asked)") in text
    assert flat("no terminal to ask") not in text
    assert not (tmg.work / "x").exists()
