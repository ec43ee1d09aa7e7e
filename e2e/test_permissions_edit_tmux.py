"""An edit in a real terminal: the REPL asks with the diff, "always" holds across a restart,
/permissions revokes it and the next edit asks again."""

from __future__ import annotations

import re

import pytest

from e2e.mock_llm import Text, ToolCall
from e2e.tmux import Terminal, flat, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

PROMPT = r"^default · openai/mock-model"


def edit(old: str, new: str) -> tuple[ToolCall, ToolCall]:
    return (ToolCall("read_file", {"path": "app.py"}),
            ToolCall("edit_file", {"path": "app.py", "old_string": old, "new_string": new}))


def test_an_edit_asks_with_its_diff_always_persists_and_a_revoke_asks_again(tmg, llm):
    app = tmg.work / "app.py"
    app.write_text("x = 1\n")
    first = Terminal(width=120, height=40)
    try:
        llm.enqueue(*edit("x = 1", "x = 2"), Text("edited once"))
        first.start_tmg(tmg, prompt=PROMPT)
        first.ask("set x to 2")
        screen = first.wait_for(r"allow\? \[y/s/a/n/m\]")
        assert flat(f"tmg asks: edit_file wants to change {app} (changing files asks by default)") in flat(screen)
        assert re.search(r"^\s+-x = 1$", screen, re.M) and re.search(r"^\s+\+x = 2$", screen, re.M), screen
        assert flat(f'"this session" and "always" allow: edit_file({tmg.work}/**)') in flat(screen)  # however it wraps
        assert app.read_text() == "x = 1\n"
        first.type("a")
        first.wait_for("edited once")
        assert app.read_text() == "x = 2\n"
        first.ask("/exit")
        assert first.exit_status() == 0
    finally:
        first.close()
    again = Terminal(width=120, height=40)
    try:
        llm.enqueue(*edit("x = 2", "x = 3"), Text("edited twice"))
        again.start_tmg(tmg, prompt=PROMPT)
        again.ask("set x to 3")
        again.wait_for("edited twice")
        assert "allow?" not in again.scrollback() and app.read_text() == "x = 3\n"
        again.ask("/permissions revoke 1")
        again.wait_for(lambda s: flat(f"revoked: allow edit_file({tmg.work}/**)") in flat(s))
        llm.enqueue(*edit("x = 3", "x = 4"), Text("not edited"))
        again.ask("set x to 4")
        again.wait_for(r"allow\? \[y/s/a/n/m\]")
        again.type("n")
        again.wait_for("not edited")
        assert app.read_text() == "x = 3\n"
        again.ask("/exit")
        assert again.exit_status() == 0
    finally:
        again.close()
