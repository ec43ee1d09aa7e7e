"""Consent in a real terminal: the REPL asks before a tool changes anything, shows exactly what
will be sent, and "always" holds across a restart until /permissions revokes it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.tmux import Terminal, tmux_available

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
    screen = term.wait_for(r"allow\? \[y/a/n/m\]")
    assert "tmg asks: mcp_echo_scribble wants to call (changing files asks by default)" in screen
    assert '"text": "hello there"' in screen  # exactly what the server will be sent
    assert "[a] yes always: mcp_echo_scribble" in screen
    assert not first.exists()
    term.ask("a")
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
        again.wait_for(r"allow\? \[y/a/n/m\]")
        again.ask("n")
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
