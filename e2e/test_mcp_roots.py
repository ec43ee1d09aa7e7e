"""MCP roots through the real tmg (issue 15 item 11): the real server-filesystem, started without a
folder, works in the folders tmg advertises: the working folder and the config's ROOTS."""

from __future__ import annotations

import pytest

from e2e.mock_llm import Text, ToolCall
from tests.support.reference_servers import reference_server

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def filesystem() -> str:
    command, *args = reference_server("filesystem")
    return f"MCP_SERVERS:\n  fs:\n    COMMAND: {command}\n    ARGS: {args}\n    TIMEOUT: 60\n"


def tool_results(request) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_a_filesystem_server_without_a_folder_works_in_the_working_folder_and_roots(tmg, llm):
    extra = tmg.root / "extra"
    extra.mkdir()
    (extra / "plan.txt").write_text("the extra root\n")
    (tmg.work / "notes.txt").write_text("hello from the working folder\n")
    tmg.write_config(f"ROOTS: [{extra}]\n" + filesystem())
    llm.enqueue(ToolCall("mcp_fs_list_allowed_directories", {}),
                ToolCall("mcp_fs_read_text_file", {"path": str(tmg.work / "notes.txt")}),
                ToolCall("mcp_fs_read_text_file", {"path": str(extra / "plan.txt")}),
                Text("read them"))
    r = tmg.run("read my notes", env=tmg.env(TMG_MCP_WAIT="60"), timeout=120)
    assert r.code == 0, r.err
    allowed, notes, plan = tool_results(llm.requests[3])
    assert str(tmg.work.resolve()) in allowed and str(extra.resolve()) in allowed, allowed
    assert notes == "hello from the working folder\n"
    assert plan == "the extra root\n"
