"""MCP tool servers in a one-shot (issue 15 item 1, issue 10 WARM, issue 24 item 7): does the first
request carry the servers' tools, what does a prompt that needs none of them pay, and does a
prompt that calls one still get it?

`tmg "what is 2+2?"` against the local mock API with stdio reference servers (server-everything,
server-filesystem, server-memory; pinned, `scripts/install-mcp-servers`):
  - `no servers`: the floor;
  - `1 cold server, no tool used`: server-everything configured, its tools remembered from an
    earlier start (the untimed first round), not running: the prompt that needs no tool;
  - `3 servers, fixed 0.5 s wait (as before)`: TMG_MCP_WAIT=0.5, every server started and waited for;
  - `3 servers, cold path`: the default, each server's remembered tools offered, none started;
  - `3 servers, WARM`: `WARM: true`, the servers kept running by the broker between runs;
  - `1 cold server, its tool called`: the model calls `mcp_everything_echo`: the server starts for
    the call, and its answer must reach the model.
Each line gives the median wall time, its ratio to `no servers`, how many runs offered every
configured server's tools, and (the calling case) how many calls were answered. Every case runs
once per round, interleaved, after one untimed round (which teaches tmg each server's tools).

Run: PYTHONPATH=$PWD ./.venv/bin/python bench/mcp_oneshot.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT, scratch_env, tmg_bin

from e2e.mock_llm import MockLLM, Text, ToolCall
from tests.support.brokers import stop_brokers_under
from tests.support.reference_servers import reference_server

MARKERS = {"everything": "mcp_everything_echo", "files": "mcp_files_read_text_file", "notes": "mcp_notes_read_graph"}
ECHOED = "bench-echo-7f3a"


def servers(root: Path, names: tuple[str, ...], warm: bool) -> str:
    shared = root / "shared"
    shared.mkdir(exist_ok=True)
    extra = "    WARM: true\n" if warm else ""
    known = {"everything": (reference_server("everything", "stdio"), {}),
             "files": (reference_server("filesystem", str(shared)), {}),
             "notes": (reference_server("memory"), {"MEMORY_FILE_PATH": str(root / "notes.json")})}
    out = "MCP_SERVERS:\n"
    for name in names:
        argv, env = known[name]
        out += (f"  {name}:\n    COMMAND: {json.dumps(argv[0])}\n    ARGS: {json.dumps(argv[1:])}\n"
                f"    ENV: {json.dumps(env)}\n    TIMEOUT: 60\n" + extra)
    return out


ALL = ("everything", "files", "notes")
CASES = (  # name, servers, WARM, extra environment, calls a tool
    ("no servers", (), False, {}, False),
    ("1 cold server, no tool used", ("everything",), False, {}, False),
    ("3 servers, fixed 0.5 s wait (as before)", ALL, False, {"TMG_MCP_WAIT": "0.5"}, False),
    ("3 servers, cold path", ALL, False, {}, False),
    ("3 servers, WARM", ALL, True, {}, False),
    ("1 cold server, its tool called", ("everything",), False, {}, True),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    tmg = tmg_bin()
    with MockLLM() as llm:
        provider = f"PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n    URL: {llm.url}\n"
        envs, homes = {}, []
        for name, names, warm, extra, _calls in CASES:
            env, home = scratch_env(PYTHONPATH=str(ROOT), **extra)
            homes.append(home)
            config = Path(home) / "tmg.yaml"
            config.write_text(provider + (servers(Path(home), names, warm) if names else ""))
            env["TMG_CONFIG"] = str(config)
            envs[name] = env
        walls: dict[str, list[float]] = {name: [] for name in envs}
        offered = dict.fromkeys(envs, 0)
        answered = dict.fromkeys(envs, 0)
        try:
            for round_ in range(args.rounds + 1):  # the first round is untimed: it learns the tools
                for name, names, _warm, _extra, calls in CASES:
                    if calls:
                        llm.enqueue(ToolCall("mcp_everything_echo", {"message": ECHOED}), Text("done"))
                    else:
                        llm.enqueue(Text("four"))
                    seen = len(llm.requests)
                    start = time.perf_counter()
                    done = subprocess.run([tmg, "what is 2+2?"], capture_output=True, text=True, env=envs[name],
                                          stdin=subprocess.DEVNULL, cwd=envs[name]["TMG_HOME"])
                    wall = time.perf_counter() - start
                    if done.returncode != 0:
                        raise SystemExit(f"bench: {name} failed: {done.stderr[-400:]}")
                    if round_ == 0:
                        continue
                    walls[name].append(wall)
                    tools = {t["function"]["name"] for t in llm.requests[seen].get("tools", [])}
                    offered[name] += all(MARKERS[n] in tools for n in names)
                    answered[name] += calls and ECHOED in json.dumps(llm.requests[-1]["messages"][-1])
        finally:
            for home in homes:
                stop_brokers_under(Path(home))
    floor = statistics.median(walls["no servers"])
    print(f"### MCP tool servers in a one-shot ({args.rounds} rounds)\n")
    print("| case | median wall (s) | ratio to `no servers` | runs offering every server's tools | calls answered |")
    print("|---|---|---|---|---|")
    for name, names, _warm, _extra, calls in CASES:
        median = statistics.median(walls[name])
        shown = f"{offered[name]}/{args.rounds}" if names else "-"
        print(f"| {name} | {median:.3f} | {median / floor:.2f}x | {shown} | "
              f"{f'{answered[name]}/{args.rounds}' if calls else '-'} |")


if __name__ == "__main__":
    sys.exit(main())
