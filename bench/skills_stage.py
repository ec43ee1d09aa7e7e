"""The skills stage's cost: the first scan of N user skills (what a one-shot pays when it opens
its session) and, per prompt, the rescan (a listing and a stat per SKILL.md, nothing re-parsed)
plus the system-message section. Medians of many prompts.

Run: ./.venv/bin/python bench/skills_stage.py [--skills 0 10 100] [--prompts 200]
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
from tmg.context.pipeline import TurnContext  # noqa: E402
from tmg.skills.discovery import SkillScanner  # noqa: E402
from tmg.skills.session import SessionSkills  # noqa: E402
from tmg.skills.transformer import SkillsTransformer  # noqa: E402


def measure(n: int, prompts: int) -> tuple[float, float]:
    root = Path(tempfile.mkdtemp(prefix="tmg-skills-bench-"))
    for i in range(n):
        folder = root / "xdg" / "tmg" / "skills" / f"skill-{i:03d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: skill-{i:03d}\ndescription: Does thing {i}: in detail.\n"
                                         f"---\n{'Step. ' * 400}\n")
    env = {"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "xdg")}
    start = time.perf_counter()
    skills = SessionSkills(SkillScanner(env, root / "cwd", lambda _f: False), None, warn=print,
                           record=lambda _t: None)
    first = time.perf_counter() - start
    stage = SkillsTransformer(skills)

    async def per_prompt() -> list[float]:
        times = []
        for i in range(prompts):
            ctx = TurnContext([{"role": "system", "content": "p"}, {"role": "user", "content": "q"}], Config(), i + 1, 1)
            t = time.perf_counter()
            await stage.apply(ctx)
            times.append(time.perf_counter() - t)
        return times

    return first, statistics.median(asyncio.run(per_prompt()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, nargs="+", default=[0, 10, 100])
    parser.add_argument("--prompts", type=int, default=200)
    args = parser.parse_args()
    for n in args.skills:
        first, per = measure(n, args.prompts)
        print(f"{n:>4} skills: first scan {first * 1000:6.1f} ms, per prompt {per * 1000:6.2f} ms (median)")


if __name__ == "__main__":
    main()
