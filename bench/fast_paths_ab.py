"""The fast paths and a memory-off one-shot of this tree against another (a branch's base),
interleaved round by round so that the machine's noise hits both alike; both run from bytecode
(kept under a temporary folder, never in a source tree).

Make the other tree with `git archive BASE | tar -x -C /tmp/base`.

Run: ./.venv/bin/python bench/fast_paths_ab.py /tmp/base [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from _common import interleaved, scratch_env, tmg_bin, timed

from e2e.mock_llm import MockLLM, Text

CASES = {"-t": ["-t"], "--version": ["--version"], "--help": ["--help"], "one-shot": ["--new", "-r"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base", help="the other tree (its tmg/ package is run instead of this one's)")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    trees = {"base": str(Path(args.base).resolve()), "this tree": str(Path(__file__).resolve().parent.parent)}
    tmg = tmg_bin()
    with MockLLM(default=Text("four", chunks=2)) as llm:
        env, home = scratch_env()
        config = Path(home) / "tmg.yaml"
        config.write_text(f"PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n    URL: {llm.url}\n")
        env["TMG_CONFIG"] = str(config)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cases = {}
        for name, tree in trees.items():
            tree_env = dict(env, PYTHONPATH=tree, PYTHONPYCACHEPREFIX=f"{home}/pyc-{len(cases)}")
            timed([tmg, "2+2?"], env=tree_env)  # a session for -t; the bytecode written
            for case, argv in CASES.items():
                cases[(case, name)] = {"cmd": [tmg, *argv], "env": tree_env,
                                       **({"stdin": "2+2?\n"} if case == "one-shot" else {})}
        named = {f"{case} {name}": spec for (case, name), spec in cases.items()}
        interleaved(named, 1)
        samples = interleaved(named, args.rounds)
    print("| case | base (s) | this tree (s) | this / base |\n|---|---|---|---|")
    for case in CASES:
        base, this = (statistics.median(samples[f"{case} {n}"]) for n in trees)
        print(f"| `tmg {case}` | {base:.3f} | {this:.3f} | {this / base:.2f}x |")


if __name__ == "__main__":
    sys.exit(main())
