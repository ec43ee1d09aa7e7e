"""The permission engine through the real tmg: one-shots (no terminal, so "ask" is a refusal),
a real MCP server's annotated tools, REQUIRES_CONSENT, rules, modes, secrets under cwd `/`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from e2e.conftest import API_KEY, tmg_command
from e2e.mock_llm import Text, ToolCall

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

REPO = Path(__file__).resolve().parent.parent
ECHO_SERVER = REPO / "tests" / "support" / "echo_mcp_server.py"


def servers(name: str = "echo", extra: str = "") -> str:
    return f"MCP_SERVERS:\n  {name}:\n    COMMAND: {sys.executable}\n    ARGS: [{ECHO_SERVER}]\n    TIMEOUT: 30\n" + extra


def run(tmg, *args: str, prompt: str = "use the tool"):
    return tmg.run(*args, prompt, env=tmg.env(TMG_MCP_WAIT="60"))


def last_tool_message(llm) -> str:
    message = llm.requests[1]["messages"][-1]
    assert message["role"] == "tool"
    return message["content"]


def transcript(tmg) -> str:
    (session,) = tmg.session_dirs()
    return (session / "transcript.md").read_text()


def test_an_mcp_write_tool_is_refused_in_a_one_shot_and_the_model_and_stderr_say_how_to_allow_it(tmg, llm):
    target = tmg.root / "scribbled.txt"
    tmg.write_config(servers())
    llm.enqueue(ToolCall("mcp_echo_scribble", {"path": str(target), "text": "hi"}), Text("I could not write it"))
    r = run(tmg)
    assert r.code == 1, r.err  # a refused tool: the answer stands, the run did not do what was asked
    assert r.out == "I could not write it\n"
    assert not target.exists()
    refusal = last_tool_message(llm)
    assert refusal.startswith("refused:") and "mcp_echo_scribble" in refusal
    lines = [line for line in r.err.splitlines() if "PERMISSIONS.ALLOW" in line]
    assert len(lines) == 1 and lines[0].startswith("tmg: refused mcp_echo_scribble")
    assert "PERMISSIONS.ALLOW" in lines[0] and "mcp_echo_scribble" in lines[0] and "--permissions yolo" in lines[0]
    assert "mcp_echo_scribble refused (changing files asks by default; no terminal to ask)" in transcript(tmg)


def test_a_rule_allows_the_write_tool_and_the_transcript_names_the_rule(tmg, llm):
    target = tmg.root / "scribbled.txt"
    tmg.write_config(servers() + "PERMISSIONS:\n  ALLOW: [mcp_echo_scribble]\n")
    llm.enqueue(ToolCall("mcp_echo_scribble", {"path": str(target), "text": "hi"}), Text("written"))
    r = run(tmg)
    assert r.code == 0, r.err
    assert target.read_text() == "hi"
    assert last_tool_message(llm) == f"wrote {target}"
    assert "refused" not in r.err
    assert "mcp_echo_scribble allowed by rule mcp_echo_scribble" in transcript(tmg)


def test_yolo_allows_it_and_says_so_on_stderr_and_in_the_transcript(tmg, llm):
    target = tmg.root / "scribbled.txt"
    tmg.write_config(servers())
    llm.enqueue(ToolCall("mcp_echo_scribble", {"path": str(target), "text": "hi"}), Text("written"))
    r = run(tmg, "--permissions", "yolo")
    assert r.code == 0, r.err
    assert target.read_text() == "hi"
    assert "yolo mode (--permissions): every tool call runs without asking" in r.err
    text = transcript(tmg)
    assert "yolo mode" in text and "mcp_echo_scribble allowed by yolo mode" in text


def test_a_deny_rule_beats_yolo_and_an_allow_rule(tmg, llm):
    target = tmg.root / "scribbled.txt"
    tmg.write_config(servers() + "PERMISSIONS:\n  ALLOW: [mcp_echo_*]\n  DENY: [mcp_echo_scribble]\n")
    llm.enqueue(ToolCall("mcp_echo_scribble", {"path": str(target), "text": "hi"}), Text("denied"))
    r = run(tmg, "--permissions", "yolo")
    assert r.code == 1, r.err
    assert not target.exists()
    assert "denied by rule mcp_echo_scribble" in last_tool_message(llm)
    assert "rule mcp_echo_scribble in PERMISSIONS.DENY" in r.err


def test_a_tool_annotated_read_only_runs_without_asking(tmg, llm):
    tmg.write_config(servers())
    llm.enqueue(ToolCall("mcp_echo_echo", {"text": "hello"}), Text("done"))
    r = run(tmg)
    assert r.code == 0, r.err
    assert last_tool_message(llm) == "hello"
    assert "refused" not in r.err
    assert "mcp_echo_echo reads are allowed by default" in transcript(tmg)


def test_read_only_mode_refuses_the_write_tool_and_names_the_mode(tmg, llm):
    target = tmg.root / "scribbled.txt"
    tmg.write_config(servers() + "PERMISSIONS:\n  MODE: read-only\n")
    llm.enqueue(ToolCall("mcp_echo_scribble", {"path": str(target), "text": "hi"}), Text("no"))
    r = run(tmg)
    assert r.code == 1, r.err
    assert not target.exists()
    assert "read-only mode (PERMISSIONS.MODE)" in r.err


def test_a_requires_consent_servers_tools_are_offered_and_every_call_is_refused_in_a_one_shot(tmg, llm):
    # Even an allow rule for its tools does not skip the question the server asks for.
    tmg.write_config(servers(extra="    REQUIRES_CONSENT: true\n") + "PERMISSIONS:\n  ALLOW: [mcp_echo_*]\n")
    llm.enqueue(ToolCall("mcp_echo_echo", {"text": "hello"}), Text("refused"))
    r = run(tmg)
    assert r.code == 1, r.err
    offered = {t["function"]["name"] for t in llm.requests[0]["tools"]}
    assert {"mcp_echo_echo", "mcp_echo_scribble"} <= offered
    refusal = last_tool_message(llm)
    assert refusal.startswith("refused:") and "requires consent" in refusal
    assert "REQUIRES_CONSENT" in r.err and "hello" not in refusal


def test_with_the_working_folder_at_root_reading_proc_self_environ_is_refused(tmg, llm):
    llm.enqueue(ToolCall("read_file", {"path": "proc/self/environ"}), Text("could not"))
    proc = subprocess.run(tmg_command() + ["read my environment"], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60, cwd="/", env=tmg.env())
    assert proc.returncode == 1, proc.stderr
    refusal = last_tool_message(llm)
    # The path as the tool names it (/proc/self/environ, or resolved to /proc/<pid>/environ).
    assert refusal.startswith("refused:") and "/environ" in refusal
    assert API_KEY not in refusal and "MOCK_API_KEY" not in refusal
    assert len([line for line in proc.stderr.splitlines() if line.startswith("tmg: refused read_file")]) == 1


def test_tmg_permissions_lists_and_revokes_saved_decisions(tmg, llm):
    empty = tmg.run("permissions")
    assert empty.code == 0 and empty.out.startswith("no saved permission decisions")
    store = tmg.root / "xdg" / "tmg" / "permissions.json"
    store.parent.mkdir(parents=True)
    store.write_text('{"version": 1, "decisions": [{"rule": "shell(npm test)", "decision": "allow", '
                     f'"folder": "{tmg.work}", "added": "2026-11-30T00:00:00Z"}}]}}\n')
    listed = tmg.run("permissions")
    assert listed.code == 0 and f"1. allow shell(npm test)  (in {tmg.work} and below" in listed.out
    missing = tmg.run("permissions", "--revoke", "7")
    assert missing.code == 1 and missing.err.count("\n") == 1 and "no saved decision '7'" in missing.err
    revoked = tmg.run("permissions", "--revoke", "shell(npm test)")
    assert revoked.code == 0 and revoked.out == f"revoked: allow shell(npm test) (in {tmg.work})\n"
    assert tmg.run("permissions").out.startswith("no saved permission decisions")


def test_a_saved_decision_holds_only_in_its_folder(tmg, llm):
    target = tmg.root / "scribbled.txt"
    store = tmg.root / "xdg" / "tmg" / "permissions.json"
    store.parent.mkdir(parents=True)
    elsewhere = tmg.root / "elsewhere"
    store.write_text('{"version": 1, "decisions": [{"rule": "mcp_echo_scribble", "decision": "allow", '
                     f'"folder": "{elsewhere}", "added": "2026-11-30T00:00:00Z"}}]}}\n')
    tmg.write_config(servers())
    llm.enqueue(ToolCall("mcp_echo_scribble", {"path": str(target), "text": "hi"}), Text("no"))
    r = run(tmg)
    assert r.code == 1, r.err
    assert not target.exists()


def test_a_bad_permissions_mode_is_a_usage_error(tmg, llm):
    r = tmg.run("--permissions", "yes", "hello")
    assert r.code == 2 and "--permissions 'yes' is not a mode; use one of: default, accept-edits, read-only, plan, yolo" in r.err


def test_the_users_deny_rule_holds_in_a_trusted_project_folder_with_its_own_tmg_yaml(tmg, llm):
    # The project's tmg.yaml is the config in its folder; the user's own file (the XDG one)
    # denies `touch`. Only the user's rule can refuse here: the project allows nothing special
    # and the run says --permissions yolo.
    mine = tmg.root / "xdg" / "tmg" / "config.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text(tmg.config.read_text() + "PERMISSIONS:\n  DENY: [shell(touch)]\n")
    (tmg.work / "tmg.yaml").write_text(tmg.config.read_text() + "PERSON: the project's helper\n")
    env = tmg.env()
    del env["TMG_CONFIG"]  # ./tmg.yaml is found in the working folder, as in a real project
    assert tmg.run("trust", env=env).code == 0
    llm.enqueue(ToolCall("shell", {"command": "touch x"}), Text("I may not create it"))
    r = tmg.run("--permissions", "yolo", "create x", env=env)
    assert r.code == 1, r.err
    assert r.out == "I may not create it\n"
    assert not (tmg.work / "x").exists()
    assert llm.requests[0]["messages"][0]["content"].startswith("the project's helper")  # the project's config
    assert "denied by rule shell(touch)" in last_tool_message(llm)
    (line,) = [line for line in r.err.splitlines() if line.startswith("tmg: refused shell")]
    assert f"rule shell(touch) in PERMISSIONS.DENY in {mine} denies it" in line
