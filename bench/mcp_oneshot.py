"""MCP tool servers in a one-shot (issue 15 item 1, issue 10 WARM): does the first request carry
the servers' tools, and what does waiting for them cost?

`echo q | tmg` against the local mock API with three stdio reference servers (server-everything,
server-filesystem, server-memory; pinned, `scripts/install-mcp-servers`):
  - `no servers`: the floor;
  - `3 servers, fixed 0.5 s wait (as before)`: TMG_MCP_WAIT=0.5, what every one-shot did before;
  - `3 servers, cold path`: the default, each server waited for as long as its remembered starts need;
  - `3 servers, WARM`: `WARM: true`, the servers kept running by the broker between runs.
Each case's line gives the median wall time and how many runs offered all three servers' tools
in the request the mock received. Every case runs once per round, interleaved.

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

from e2e.mock_llm import MockLLM, Text
from tests.support.brokers import stop_brokers_under
from tests.support.reference_servers import reference_server

MARKERS = ("mcp_everything_echo", "mcp_files_read_text_file", "mcp_notes_read_graph")


def servers(root: Path, warm: bool) -> str:
    shared = root / "shared"
    shared.mkdir(exist_ok=True)
    extra = "    WARM: true\n" if warm else ""
    out = "MCP_SERVERS:\n"
    for name, argv, env in (("everything", reference_server("everything", "stdio"), {}),
                            ("files", reference_server("filesystem", str(shared)), {}),
                            ("notes", reference_server("memory"), {"MEMORY_FILE_PATH": str(root / "notes.json")})):
        out += (f"  {name}:\n    COMMAND: {json.dumps(argv[0])}\n    ARGS: {json.dumps(argv[1:])}\n"
                f"    ENV: {json.dumps(env)}\n" + extra)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    tmg = tmg_bin()
    with MockLLM() as llm:
        provider = (f"PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n    URL: {llm.url}\n")
        cases = {}
        homes = []
        for name, body, extra in (("no servers", "", {}),
                                  ("3 servers, fixed 0.5 s wait (as before)", "cold", {"TMG_MCP_WAIT": "0.5"}),
                                  ("3 servers, cold path", "cold", {}),
                                  ("3 servers, WARM", "warm", {})):
            env, home = scratch_env(PYTHONPATH=str(ROOT), **extra)
            homes.append(home)
            config = Path(home) / "tmg.yaml"
            config.write_text(provider + (servers(Path(home), body == "warm") if body else ""))
            env["TMG_CONFIG"] = str(config)
            cases[name] = env
        walls: dict[str, list[float]] = {name: [] for name in cases}
        offered: dict[str, int] = {name: 0 for name in cases}
        try:
            for _ in range(args.rounds):
                for name, env in cases.items():
                    llm.enqueue(Text("four"))
                    start = time.perf_counter()
                    done = subprocess.run([tmg, "what is 2+2?"], capture_output=True, text=True, env=env,
                                          stdin=subprocess.DEVNULL, cwd=env["TMG_HOME"])
                    walls[name].append(time.perf_counter() - start)
                    if done.returncode != 0:
                        raise SystemExit(f"bench: {name} failed: {done.stderr[-400:]}")
                    names = {t["function"]["name"] for t in llm.requests[-1].get("tools", [])}
                    offered[name] += all(m in names for m in MARKERS)
        finally:
            for home in homes:
                stop_brokers_under(Path(home))
    print(f"### MCP tool servers in a one-shot ({args.rounds} rounds)\n")
    print("| case | median wall (s) | runs offering all 3 servers' tools |\n|---|---|---|")
    for name in cases:
        print(f"| {name} | {statistics.median(walls[name]):.3f} | {offered[name]}/{args.rounds} |")


if __name__ == "__main__":
    sys.exit(main())
