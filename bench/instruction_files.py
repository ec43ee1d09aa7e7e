"""The instruction-files stage's cost per prompt: the stat of each candidate from the repository's
root down to the working folder (and the user's own file), plus its section of the system
message, with no file, and with an AGENTS.md at every level. Medians of many prompts.

Run: ./.venv/bin/python bench/instruction_files.py [--depth 6] [--prompts 500]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tmg.config.model import Config  # noqa: E402
from tmg.context.instruction_files import InstructionFiles  # noqa: E402
from tmg.context.instructions import InstructionsTransformer  # noqa: E402
from tmg.context.pipeline import TurnContext  # noqa: E402


def measure(depth: int, prompts: int, with_files: bool) -> tuple[float, float]:
    root = Path(tempfile.mkdtemp(prefix="tmg-agents-bench-"))
    (root / ".git").mkdir()
    cwd = root
    for level in range(depth):
        if with_files:
            (cwd / "AGENTS.md").write_text(f"Level {level}: {'a rule. ' * 100}\n")
        cwd = cwd / f"d{level}"
        cwd.mkdir()
    env = {"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "xdg")}
    stage = InstructionsTransformer(InstructionFiles(env, cwd))

    async def one(prompt_id: int) -> float:
        ctx = TurnContext([{"role": "system", "content": "persona"}, {"role": "user", "content": "q"}], Config(),
                          prompt_id, 1)
        start = time.perf_counter()
        await stage.apply(ctx)
        return time.perf_counter() - start

    first = asyncio.run(one(0))
    times = [asyncio.run(one(i)) for i in range(1, prompts + 1)]
    return first, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--prompts", type=int, default=500)
    args = parser.parse_args()
    print(f"| files (repository depth {args.depth}) | first prompt (ms) | later prompts, median (ms) |")
    print("|---|---|---|")
    for with_files in (False, True):
        first, per = measure(args.depth, args.prompts, with_files)
        label = f"an AGENTS.md at each of {args.depth} levels" if with_files else "none"
        print(f"| {label} | {first * 1000:.2f} | {per * 1000:.3f} |")


if __name__ == "__main__":
    main()
