"""MCP tool servers' lifecycle through the real `tmg` (issue 10, issue 15 items 1 and 13): the cold
path waits for real servers as long as their start needs, `WARM: true` servers are kept warm by
the broker per working folder, and `tmg mcp` says what each server is doing.

What is observed: the tools in the requests the mock receives, what a tool call answers (which
process served it, from which folder), stderr, and `tmg mcp`'s lines.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

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
    # What the wait is based on: each server's measured starts, remembered under TMG_HOME.
    remembered = json.loads((tmg.home / "mcp-start-times.json").read_text())
    assert len(remembered) == 3 and all(len(times) == 5 for times in remembered.values())


def test_a_server_left_out_is_said_on_stderr_and_the_answer_comes(tmg, llm):
    # `sleep` never answers initialize; its TIMEOUT bounds the wait of a server never started before.
    tmg.write_config("MCP_SERVERS:\n  slow:\n    COMMAND: sleep\n    ARGS: ['30']\n    TIMEOUT: 1\n"
                     + stdio_entry("everything", reference_server("everything", "stdio")))
    llm.enqueue(Text("fine"))
    r = tmg.run("hello")
    assert (r.code, r.out) == (0, "fine\n"), r.err
    # Said once, with how long it was waited for: its TIMEOUT (1 s), as it never started here before.
    (line,) = [line for line in r.err.splitlines() if "slow" in line]
    assert re.fullmatch(r"tmg: warning: MCP server slow is still starting after 1\.\d s; its tools are not "
                        r"offered with this prompt", line), line
    names = tool_names(llm.requests[0])
    assert "mcp_everything_echo" in names and not any(n.startswith("mcp_slow_") for n in names)


def where_entry(name: str = "where", warm: bool = True) -> str:
    return stdio_entry(name, [sys.executable, str(WHERE_SERVER)], "    WARM: true\n" if warm else "")


def asked_where(tmg, llm, cwd: Path | None = None) -> str:
    """One one-shot that calls `where` (from `cwd`); what the tool answered."""
    llm.enqueue(ToolCall("mcp_where_where", {}), Text("done"))
    env = tmg.env()
    if cwd is None:
        r = tmg.run("where are you?", env=env)
    else:
        import subprocess

        from e2e.conftest import tmg_command

        done = subprocess.run(tmg_command() + ["where are you?"], capture_output=True, text=True, timeout=60,
                              cwd=cwd, env=env, stdin=subprocess.DEVNULL)
        r = type("R", (), {"code": done.returncode, "out": done.stdout, "err": done.stderr})
    assert (r.code, r.out) == (0, "done\n"), r.err
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
