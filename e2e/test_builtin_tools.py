"""The built-in tools through the real `tmg` one-shot, the mock model calling them.

Permission these tests rely on: write_file, edit_file and shell run without asking. Until the
permission engine lands the gate allows every call; with it, a one-shot without a terminal
refuses what would ask, so WRITES_ALLOWED names the flag that allows them.
"""

from __future__ import annotations

import pytest

from e2e.conftest import API_KEY
from e2e.mock_llm import Text, ToolCall

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

WRITES_ALLOWED: list[str] = ["--permissions", "yolo"]  # the command-line words that allow writes and runs in a one-shot


def tool_message(request) -> str:
    last = request["messages"][-1]
    assert last["role"] == "tool", last
    return last["content"]


def test_the_model_gets_every_built_in_tool(tmg, llm):
    llm.enqueue(Text("ok"))
    r = tmg.run("hello")
    assert r.code == 0, r.err
    names = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert {"read_file", "list_folder", "glob", "grep", "write_file", "edit_file", "shell"} <= names


def test_edit_file_changes_a_file_the_model_has_read(tmg, llm):
    app = tmg.work / "app.py"
    app.write_text("def greet():\n    return 'hello'\n")
    llm.enqueue(ToolCall("read_file", {"path": "app.py"}),
                ToolCall("edit_file", {"path": "app.py", "old_string": "'hello'", "new_string": "'bonjour'"}),
                Text("changed"))
    r = tmg.run(*WRITES_ALLOWED, "say bonjour instead")
    assert r.code == 0 and r.out == "changed\n", r.err
    assert tool_message(llm.requests[1]) == "     1\tdef greet():\n     2\t    return 'hello'"
    assert tool_message(llm.requests[2]) == "edited app.py (new text at line 2)"
    assert app.read_text() == "def greet():\n    return 'bonjour'\n"


def test_an_edit_without_a_read_is_refused_and_the_file_kept(tmg, llm):
    app = tmg.work / "app.py"
    app.write_text("x = 1\n")
    llm.enqueue(ToolCall("edit_file", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}), Text("ok"))
    r = tmg.run(*WRITES_ALLOWED, "change x")
    assert r.code == 0, r.err
    assert "app.py has not been read in this session; read it with read_file first" in tool_message(llm.requests[1])
    assert app.read_text() == "x = 1\n"


def test_shell_output_reaches_the_next_request_without_tmgs_secrets(tmg, llm):
    llm.enqueue(ToolCall("shell", {"command": "echo made-by-shell > out.txt; cat out.txt; env"}), Text("ran it"))
    r = tmg.run(*WRITES_ALLOWED, "run it")
    assert r.code == 0 and r.out == "ran it\n", r.err
    result = tool_message(llm.requests[1])
    assert result.startswith("exit code: 0\nstdout:\nmade-by-shell\n")
    assert (tmg.work / "out.txt").read_text() == "made-by-shell\n"  # the working folder is its cwd
    assert API_KEY not in result and "MOCK_API_KEY" not in result and "TMG_HOME" not in result


def test_grep_and_glob_find_what_the_model_asks_for(tmg, llm):
    (tmg.work / "src").mkdir()
    (tmg.work / "src" / "main.py").write_text("import sys\n\ndef main():\n    print('needle')\n")
    (tmg.work / "notes.md").write_text("no match here\n")
    llm.enqueue(ToolCall("grep", {"pattern": "print\\("}), ToolCall("glob", {"pattern": "*.py"}), Text("found"))
    r = tmg.run("find the print")
    assert r.code == 0 and r.out == "found\n", r.err
    assert tool_message(llm.requests[1]) == "src/main.py:4:    print('needle')"
    assert tool_message(llm.requests[2]) == "src/main.py"
