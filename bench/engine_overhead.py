"""P5 of quality.md: per-turn engine overhead at 5,000 stored messages vs 50, and resume time.

The model is an in-process gateway that answers at once, and memory is off, so what is timed
is the engine alone: Guard, Refining (the whole context pipeline), Persisting (append + fsync),
hooks and events. Both sizes run interleaved in one process; medians of many prompts.

Run: ./.venv/bin/python bench/engine_overhead.py [--prompts 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tmg.compose import build_pipeline, build_tools  # noqa: E402
from tmg.config.model import Config  # noqa: E402
from tmg.engine.engine import PhaseEngine  # noqa: E402
from tmg.engine.events import NullEvents  # noqa: E402
from tmg.engine.hooks import HookSet  # noqa: E402
from tmg.environment import Environment  # noqa: E402
from tmg.llm.gateway import Completion, ProviderSpec, Usage  # noqa: E402
from tmg.session.history import History  # noqa: E402

SPEC = ProviderSpec(name="null", model="null/instant")


class InstantModel:
    async def complete(self, request, on_text):
        on_text("ok")
        return Completion(text="ok", tool_calls=[], usage=Usage(10, 1, None))

    async def aclose(self):
        pass


def seed(path: Path, messages: int) -> None:
    with path.open("w") as f:
        for i in range(messages // 2):
            f.write(json.dumps({"role": "user", "content": f"question {i} " + "x" * 80, "ts": 1.0}) + "\n")
            f.write(json.dumps({"role": "assistant", "content": f"answer {i} " + "y" * 300, "ts": 1.0}) + "\n")


def engine_for(path: Path) -> PhaseEngine:
    model = InstantModel()
    return PhaseEngine(
        config=lambda: Config(max_history_tokens=10_000_000), pipeline=build_pipeline(),
        history=History(path), tools=build_tools(Environment(cwd=path.parent)), hooks=HookSet(),
        events=NullEvents(), gateway_for=lambda _c: (SPEC, model), session_id="bench",
    )


async def per_prompt(engine: PhaseEngine) -> float:
    start = time.perf_counter()
    await engine.run_prompt("next question")
    return time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tmg-p5-"))
    engines = {}
    for size in (50, 5000):
        path = root / f"h{size}.jsonl"
        seed(path, size)
        engines[size] = engine_for(path)
    samples: dict[int, list[float]] = {50: [], 5000: []}
    for _ in range(args.prompts):
        for size, engine in engines.items():
            samples[size].append(await per_prompt(engine))
    small, big = statistics.median(samples[50]), statistics.median(samples[5000])
    print("### P5: per-prompt engine overhead (instant in-process model, memory off)\n")
    print("| stored messages | median per prompt (ms) | ratio to 50 |\n|---|---|---|")
    print(f"| 50 | {small * 1000:.2f} | 1.00x |")
    print(f"| 5,000 | {big * 1000:.2f} | {big / small:.2f}x |")
    resume = []
    path = root / "resume.jsonl"
    seed(path, 5000)
    for _ in range(15):
        start = time.perf_counter()
        History(path, writable=False)
        resume.append(time.perf_counter() - start)
    print(f"\nResume (load) of a 5,000-message history: median {statistics.median(resume) * 1000:.1f} ms (target <= 500 ms)")


if __name__ == "__main__":
    asyncio.run(main())
