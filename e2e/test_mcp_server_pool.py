"""MCP tool servers' lifecycle through the real `tmg` (issue 10, issue 15 items 1 and 13): the cold
path waits for real servers as long as their start needs, `WARM: true` servers are kept warm by
the broker per working folder, and `tmg mcp` says what each server is doing.

What is observed: the tools in the requests the mock receives, what a tool call answers (which
process served it, from which folder), stderr, and `tmg mcp`'s lines.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.conftest import tmg_command
from e2e.mock_llm import Text, ToolCall
from tests.support.reference_servers import reference_server

REPO = Path(__file__).resolve().parent.parent
WHERE_SERVER = REPO / "tests" / "support" / "where_mcp_server.py"


def tool_names(request) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


def stdio_entry(name: str, argv: list[str], extra: str = "") -> str:
    command, *args = argv
    return (f"  {name}:\n    COMMAND: {json.dumps(command)}\n    ARGS: {json.dumps(args)}\n"
            f"    TIMEOUT: 60\n" + extra)


def three_reference_servers(tmg) -> str:
    shared = tmg.root / "shared"
    shared.mkdir(exist_ok=True)
    return ("MCP_SERVERS:\n"
            + stdio_entry("everything", reference_server("everything", "stdio"))
            + stdio_entry("files", reference_server("filesystem", str(shared)))
            + stdio_entry("notes", reference_server("memory"),
                          f"    ENV: {{MEMORY_FILE_PATH: {json.dumps(str(tmg.root / 'notes.json'))}}}\n"))


@pytest.mark.in_process
def test_a_one_shot_with_three_reference_servers_offers_their_tools_every_time(tmg, llm):
    # No TMG_MCP_WAIT: the default cold path. Before, a prompt waited 0.5 s and npm servers
    # were left out (10 of 10 runs offered only the built-in tools).
    tmg.write_config(three_reference_servers(tmg))
    for i in range(10):
        llm.enqueue(Text(f"answer {i}"))
        r = tmg.run(f"question {i}")
        assert (r.code, r.out) == (0, f"answer {i}\n"), r.err
        names = tool_names(llm.requests[-1])
        assert {"mcp_everything_echo", "mcp_files_read_text_file", "mcp_notes_read_graph"} <= names, (i, r.err)
        assert "still starting" not in r.err
    # The first run waited for each server (as long as its start needed) and remembered what it
    # listed; the runs after it offered that without starting any (none of them called a tool).
    remembered = json.loads((tmg.home / "mcp-start-times.json").read_text())
    assert len(remembered) == 3 and all(len(times) == 1 for times in remembered.values())
    assert len(json.loads((tmg.home / "mcp-tools.json").read_text())) == 3


def counted_where(tmg, extra: str = "") -> Path:
    starts = tmg.root / "starts"
    tmg.write_config("MCP_SERVERS:\n" + stdio_entry("where", [sys.executable, str(WHERE_SERVER)],
                                                    f"    ENV: {{STARTS_FILE: {json.dumps(str(starts))}}}\n" + extra))
    return starts


def start_count(starts: Path) -> int:
    return len(starts.read_text().splitlines()) if starts.exists() else 0


@pytest.mark.in_process
def test_a_prompt_waits_for_no_server_it_does_not_need_and_a_call_still_gets_the_tool(tmg, llm):
    starts = counted_where(tmg)
    llm.enqueue(Text("first"))
    r = tmg.run("hello")  # never started here: waited for, its tools learnt
    assert (r.code, r.out) == (0, "first\n"), r.err
    assert "mcp_where_where" in tool_names(llm.requests[-1]) and start_count(starts) == 1
    llm.enqueue(Text("second"))
    r = tmg.run("hello again")  # offered as remembered; nothing started, nothing waited for
    assert (r.code, r.out) == (0, "second\n"), r.err
    assert "mcp_where_where" in tool_names(llm.requests[-1]) and start_count(starts) == 1
    llm.enqueue(ToolCall("mcp_where_where", {}), Text("third"))
    r = tmg.run("where are you?")  # the model asks for its tool: the server starts, the call waits for it
    assert (r.code, r.out) == (0, "third\n"), r.err
    assert start_count(starts) == 2 and parsed(llm.requests[-1]["messages"][-1]["content"])["calls"] == "1"
    assert "still starting" not in r.err


@pytest.mark.in_process
def test_a_server_marked_wait_is_started_and_waited_for_by_every_prompt(tmg, llm):
    starts = counted_where(tmg, "    WAIT: true\n")
    for i in range(2):
        llm.enqueue(Text(f"answer {i}"))
        r = tmg.run("hello")
        assert (r.code, r.out) == (0, f"answer {i}\n"), r.err
        assert "mcp_where_where" in tool_names(llm.requests[-1])
    assert start_count(starts) == 2


def test_a_server_left_out_is_said_on_stderr_and_the_answer_comes(tmg, llm):
    # `sleep` never answers initialize; its TIMEOUT bounds the wait of a server never started before.
    tmg.write_config("MCP_SERVERS:\n  slow:\n    COMMAND: sleep\n    ARGS: ['30']\n    TIMEOUT: 1\n"
                     + stdio_entry("everything", reference_server("everything", "stdio")))
    llm.enqueue(Text("fine"))
    r = tmg.run("hello")
    assert (r.code, r.out) == (0, "fine\n"), r.err
    # Said once, with how long it was waited for (its TIMEOUT bounds it: it never started here before).
    (line,) = [line for line in r.err.splitlines() if "slow" in line]
    assert re.fullmatch(r"tmg: warning: MCP server slow is still starting after \d+\.\d s; its tools are not "
                        r"offered with this prompt", line), line
    names = tool_names(llm.requests[0])
    assert "mcp_everything_echo" in names and not any(n.startswith("mcp_slow_") for n in names)


def where_entry(name: str = "where", warm: bool = True) -> str:
    return stdio_entry(name, [sys.executable, str(WHERE_SERVER)], "    WARM: true\n" if warm else "")


def asked_where(tmg, llm, cwd: Path | None = None, **env_extra: str) -> str:
    """One one-shot that calls `where` (from `cwd`); what the tool answered."""
    llm.enqueue(ToolCall("mcp_where_where", {}), Text("done"))
    done = subprocess.run(tmg_command() + ["where are you?"], capture_output=True, text=True, timeout=60,
                          cwd=cwd or tmg.work, env=tmg.env(**env_extra), stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    answer = llm.requests[-1]["messages"][-1]
    assert answer["role"] == "tool", answer
    return answer["content"]


def parsed(answer: str) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=(\S+)", answer))


def test_a_warm_server_is_kept_by_the_broker_between_one_shots(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + where_entry())
    first, second = parsed(asked_where(tmg, llm)), parsed(asked_where(tmg, llm))
    # One process served both runs and kept its state: the broker holds it, not the one-shot.
    assert first["pid"] == second["pid"] and (first["calls"], second["calls"]) == ("1", "2")
    assert first["cwd"] == second["cwd"] == str(tmg.work)
    status = tmg.run("memory", "status", env=tmg.env())
    assert status.code == 0 and "server where: up" in status.out, status.out + status.err


def test_a_warm_server_is_one_per_working_folder(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + where_entry())
    other = tmg.root / "elsewhere"
    other.mkdir()
    here, there = parsed(asked_where(tmg, llm)), parsed(asked_where(tmg, llm, cwd=other))
    again = parsed(asked_where(tmg, llm, cwd=other))
    assert here["pid"] != there["pid"] and (here["cwd"], there["cwd"]) == (str(tmg.work), str(other))
    assert (again["pid"], again["calls"]) == (there["pid"], "2")


def test_without_warm_each_one_shot_starts_its_own_server(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n" + where_entry(warm=False))
    first, second = parsed(asked_where(tmg, llm)), parsed(asked_where(tmg, llm))
    assert first["pid"] != second["pid"] and second["calls"] == "1"


def test_tmg_mcp_lists_each_server_with_status_transport_tools_and_warmth(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n"
                     + stdio_entry("everything", reference_server("everything", "stdio"))
                     + where_entry()
                     + "  ghost:\n    COMMAND: no-such-mcp-server-binary\n"
                     + "  slow:\n    COMMAND: sleep\n    ARGS: ['30']\n    TIMEOUT: 1\n")
    r = tmg.run("mcp")
    assert r.code == 0, r.err
    lines = {line.split(":")[0]: line for line in r.out.splitlines() if ":" in line}
    assert re.fullmatch(r"everything: ready, \d+ tools · stdio · not warm", lines["everything"]), r.out
    assert re.fullmatch(r"where: ready, 1 tool · stdio · warm \(.*broker.*\)", lines["where"]), r.out
    assert lines["ghost"].startswith("ghost: failed — MCP server ghost did not start ("), r.out
    assert lines["ghost"].endswith(" · stdio · not warm")
    assert re.fullmatch(r"slow: starting \(\d+\.\d s so far\) · stdio · not warm", lines["slow"]), r.out
    assert llm.requests == []  # it asks no model


@pytest.mark.in_process
def test_a_direct_servers_stderr_log_is_rotated(tmg, llm):
    # Servers write their stderr under TMG_HOME for as long as they run: past 1 MB, one old generation is kept.
    tmg.home.mkdir(parents=True, exist_ok=True)
    log = tmg.home / "mcp-where.log"
    log.write_bytes(b"old noise\n" * 150_000)
    tmg.write_config("MCP_SERVERS:\n" + where_entry(warm=False))
    asked_where(tmg, llm, TMG_MCP_WAIT="60")  # (the wait is not what this test is about)
    assert (tmg.home / "mcp-where.log.1").stat().st_size == 1_500_000
    assert log.stat().st_size < 1_000_000


def memory_status(tmg) -> str:
    r = tmg.run("memory", "status", env=tmg.env(memory=True))
    assert r.code == 0, r.err
    return r.out


def test_memory_and_a_warm_tool_server_share_one_broker(tmg, llm, tmp_path):
    from e2e.plur import FakePlur

    plur = FakePlur(tmp_path)
    tmg.write_config(plur.entry() + where_entry() + "MEMORY:\n  LEARN: batch\n")
    pids = []
    for i in range(2):
        llm.enqueue(ToolCall("mcp_where_where", {}), Text(f"Answer {i}."))
        r = tmg.run("-r", "--debug", f"question {i}?", env=tmg.env(memory=True))
        assert (r.code, r.out) == (0, f"Answer {i}.\n"), r.err
        pids.append(parsed(llm.requests[-1]["messages"][-1]["content"])["pid"])
    assert "via warm broker" in r.err  # memory's second start found the broker warm
    assert pids[0] == pids[1]
    out = memory_status(tmg)
    assert "2 server(s)" in out and "server plur: up" in out and "server where: up" in out, out
    assert out.count("started 1 time(s)") == 2, out
    assert {"Answer 0.", "Answer 1."} <= set(plur.statements())  # memory's writes landed through it


def test_the_real_plur_and_a_warm_tool_server_in_one_broker(tmg, llm, tmp_path, plur_entry):
    plur_home = tmp_path / "plur-home"
    plur_home.mkdir()
    neutral = tmp_path / "neutral"
    neutral.mkdir()
    tmg.write_config("MCP_SERVERS:\n  plur:\n    COMMAND: node\n"
                     f"    ARGS: [{json.dumps(str(plur_entry))}]\n"
                     f"    ENV: {{HOME: {json.dumps(str(plur_home))}, PLUR_TOOL_PROFILE: full, "
                     "PLUR_DISABLE_EMBEDDINGS: '1'}\n"
                     f"    DIR: {json.dumps(str(neutral))}\n    TIMEOUT: 60\n"
                     + where_entry() + "MEMORY:\n  LEARN: full\n")
    llm.enqueue(ToolCall("mcp_where_where", {}), Text("Noted."))
    r = tmg.run("-r", "From now on, tag heron releases with a date.", env=tmg.env(memory=True))
    assert (r.code, r.out) == (0, "Noted.\n"), r.err
    first = parsed(llm.requests[-1]["messages"][-1]["content"])
    llm.enqueue(ToolCall("mcp_where_where", {}), Text("Tagged."))
    r = tmg.run("-r", "--debug", "How do we tag heron releases?", env=tmg.env(memory=True))
    assert (r.code, r.out) == (0, "Tagged.\n"), r.err
    second = parsed(llm.requests[-1]["messages"][-1]["content"])
    assert "via warm broker" in r.err
    assert (first["pid"], second["calls"]) == (second["pid"], "2")
    # recall through the broker: the instruction reached the model with the second prompt
    assert "tag heron releases with a date" in json.dumps(llm.requests[-2]["messages"])
    out = memory_status(tmg)
    assert "2 server(s)" in out and out.count("started 1 time(s)") == 2, out


def test_slash_mcp_in_the_repl_lists_the_servers(tmg, llm):
    import os
    import time

    from e2e.tmux import Terminal
    tmg.write_config("MCP_SERVERS:\n" + stdio_entry("everything", reference_server("everything", "stdio"))
                     + where_entry() + "  ghost:\n    COMMAND: no-such-mcp-server-binary\n")
    term = Terminal(width=160, height=40)
    try:
        term.start_tmg(tmg, prompt=r"default · openai/mock-model >")
        term.wait_for("MCP server ghost did not start")
        # The servers start in the background: ask until both are up.
        deadline = time.monotonic() + 60
        while True:
            term.ask("/mcp")
            try:
                screen = term.wait_for(lambda s: "where: ready, 1 tool" in s and "everything: ready" in s, timeout=2)
                break
            except AssertionError:
                assert time.monotonic() < deadline, "the servers never showed as ready in /mcp"
        assert re.search(r"everything: ready, \d+ tools · stdio · not warm", screen), screen
        assert re.search(r"where: ready, 1 tool · stdio · warm \(", screen), screen
        assert "ghost: failed — MCP server ghost did not start (" in screen
        term.send("C-d")
        assert term.exit_status() == 0
    finally:
        term.close()
