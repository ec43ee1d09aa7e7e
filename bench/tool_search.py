"""The built-in search tools' cost: grep through ripgrep vs the Python search, glob, and the size
of the built-in tool schemas the model reads on every request.

Searches this repository (git-aware listing, .gitignore respected) for a word found in many
files; medians of interleaved runs, in one process, through the tools' own `run`.

Run: ./.venv/bin/python bench/tool_search.py [--runs 15] [--path .]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tmg.session.toolbox import build_tools  # noqa: E402
from tmg.environment import Environment  # noqa: E402
from tmg.tools.files import RootGuard  # noqa: E402
from tmg.tools.search import GlobTool, GrepTool  # noqa: E402


async def median_ms(run, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--path", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args()
    root = Path(args.path).resolve()
    guard = RootGuard([root])
    rg = shutil.which("rg")
    query = {"pattern": r"def \w+_tool", "glob": "*.py"}
    cases = {"grep (python)": lambda: GrepTool(guard, ripgrep="").run(query),
             "glob **/*.py": lambda: GlobTool(guard).run({"pattern": "**/*.py"})}
    if rg:
        cases["grep (ripgrep)"] = lambda: GrepTool(guard, ripgrep=rg).run(query)
    results = {name: await median_ms(run, args.runs) for name, run in cases.items()}
    for name, ms in results.items():
        print(f"{name:16} {ms:8.1f} ms (median of {args.runs}, {root})")
    schemas = build_tools(Environment(cwd=root)).schemas()
    print(f"built-in tool schemas: {len(schemas)} tools, {len(json.dumps(schemas))} characters of JSON")


if __name__ == "__main__":
    asyncio.run(main())
