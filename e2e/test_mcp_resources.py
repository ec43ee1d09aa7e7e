"""MCP resources named in a prompt as `@server:uri` (issue 15, item 12): the real tmg, the mock LLM,
and the pinned reference server-everything (its resources: demo://resource/static/document/*.md,
demo://resource/dynamic/text/N, demo://resource/dynamic/blob/N)."""

from __future__ import annotations

import json

import pytest

from e2e.mock_llm import Text
from e2e.test_mcp_results import everything_server, run

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

ARCHITECTURE = "demo://resource/static/document/architecture.md"


def user_messages(request) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_a_resource_named_in_a_one_shot_reaches_the_model_after_the_prompt(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server())
    llm.enqueue(Text("summarised"))
    r = run(tmg, f"summarise @everything:{ARCHITECTURE}.")
    assert r.code == 0 and r.out == "summarised\n", r.err
    sent = user_messages(llm.requests[0])[-1]
    assert sent.startswith(f"summarise @everything:{ARCHITECTURE}.\n\n--- resource @everything:{ARCHITECTURE} ---\n")
    assert f"[resource {ARCHITECTURE} (text/markdown)]\n# Everything Server – Architecture" in sent
    assert sent.endswith(f"\n--- end of resource @everything:{ARCHITECTURE} ---")
    assert "warning" not in r.err
    # What was sent is what the session keeps: a resumed session sends the same.
    history = [json.loads(line) for line in (tmg.session_dirs()[0] / "history.jsonl").read_text().splitlines()]
    assert [m["content"] for m in history if m.get("role") == "user"] == [sent]


def test_a_resource_that_cannot_be_read_is_one_line_and_the_answer_still_comes(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server())
    llm.enqueue(Text("answered anyway"))
    r = run(tmg, "compare @everything:demo://nothing/here with @everything:demo://resource/dynamic/text/1")
    assert r.code == 0 and r.out == "answered anyway\n", r.err
    lines = [line for line in r.err.splitlines() if "demo://nothing/here" in line]
    assert lines == ["tmg: warning: MCP resource @everything:demo://nothing/here was not attached: everything "
                     "answered: Resource demo://nothing/here not found (JSON-RPC error -32602); the prompt is sent "
                     "without it"]
    sent = user_messages(llm.requests[0])[-1]
    assert "--- resource @everything:demo://nothing/here could not be read (everything answered: Resource " \
           "demo://nothing/here not found (JSON-RPC error -32602)); its content is not included ---" in sent
    assert "Resource 1: This is a plaintext resource" in sent  # the other one still came


def test_at_signs_that_name_no_server_are_left_as_typed_a_likely_typo_is_said_and_a_doubled_one_escapes(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + everything_server())
    llm.enqueue(Text("ok"))
    prompt = f"mail a@b.c, ask @bob:now, read @evrything:demo://x, not @@everything:{ARCHITECTURE}"
    r = run(tmg, prompt)
    assert r.code == 0, r.err
    assert user_messages(llm.requests[0])[-1] == \
        f"mail a@b.c, ask @bob:now, read @evrything:demo://x, not @everything:{ARCHITECTURE}"
    # A URI after a name no server has is most likely a typo: said, and sent as typed.
    assert [line for line in r.err.splitlines() if "warning" in line] == [
        "tmg: warning: @evrything: in the prompt names no MCP server (servers: everything); it is sent as typed"]


def test_a_resource_of_a_server_that_did_not_start_is_one_line_and_the_answer_still_comes(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n  broken:\n    COMMAND: /nonexistent/mcp-server\n")
    llm.enqueue(Text("answered anyway"))
    r = run(tmg, "read @broken:file:///a.md")
    assert r.code == 0 and r.out == "answered anyway\n", r.err
    lines = [line for line in r.err.splitlines() if "@broken:file:///a.md" in line]
    assert lines == ["tmg: warning: MCP resource @broken:file:///a.md was not attached: MCP server broken is not "
                     "ready (failed); the prompt is sent without it"]
