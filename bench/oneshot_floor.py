"""P2' of issue 10: a memory-off one-shot `echo q | tmg` against the smallest program that does
the same job: a bare httpx client that streams the answer from the same local mock and prints it
(target <= 1.6x). What is left between them is tmg itself: CLI, config, session files, engine.

Both run from bytecode, as installed programs do (see ``with_bytecode``), after one untimed round.

Run: ./.venv/bin/python bench/oneshot_floor.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from _common import interleaved, report, scratch_env, tmg_bin, with_bytecode

from e2e.mock_llm import MockLLM, Text

BARE = """
import json, sys, httpx
question = sys.stdin.read()
body = {"model": "mock", "stream": True, "messages": [{"role": "user", "content": question}]}
with httpx.Client() as client:
    with client.stream("POST", sys.argv[1] + "/chat/completions", json=body,
                       headers={"Authorization": "Bearer k"}) as response:
        for line in response.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in json.loads(line[6:]).get("choices", []):
                    sys.stdout.write((choice.get("delta") or {}).get("content") or "")
sys.stdout.write("\\n")
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    tmg = tmg_bin()
    with MockLLM(default=Text("four", chunks=2)) as llm:
        env, home = scratch_env()
        config = Path(home) / "tmg.yaml"
        config.write_text(f"PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n    URL: {llm.url}\n")
        env["TMG_CONFIG"] = str(config)
        env = with_bytecode(env, home)
        bare_env = with_bytecode(dict(os.environ), home)
        cases = {
            "bare httpx streaming client": {"cmd": [sys.executable, "-c", BARE, llm.url], "stdin": "2+2?\n",
                                            "env": bare_env},
            "echo q | tmg (memory off)": {"cmd": [tmg, "--new", "-r"], "stdin": "2+2?\n", "env": env},
        }
        interleaved(cases, 1)  # writes the bytecode
        samples = interleaved(cases, args.rounds)
        print(report("P2': memory-off one-shot vs a bare httpx streaming client (target <= 1.6x)", samples,
                     "bare httpx streaming client"))


if __name__ == "__main__":
    main()
