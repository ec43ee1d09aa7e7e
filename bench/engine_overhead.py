"""P5 of quality.md: per-turn engine overhead at 5,000 stored messages vs 50, and resume time.

Also 5,000 stored messages with a summary in place (issue 14): the budget gatekeeper's summary
record keeps only the latest 20 messages in what is sent; reading and sending must not cost
per prompt what the 4,980 summarised messages would.

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

from tmg.compose import build_pipeline  # noqa: E402
from tmg.session.toolbox import build_tools  # noqa: E402
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


def seed(path: Path, messages: int, summary_keeps: int | None = None) -> None:
    with path.open("w") as f:
        for i in range(messages // 2):
            f.write(json.dumps({"role": "user", "content": f"question {i} " + "x" * 80, "ts": 1.0}) + "\n")
            f.write(json.dumps({"role": "assistant", "content": f"answer {i} " + "y" * 300, "ts": 1.0}) + "\n")
        if summary_keeps is not None:
            f.write(json.dumps({"role": "summary", "content": "## Goal and current task\n" + "z" * 1500, "ts": 1.0,
                                "meta": {"summary": {"keep_from": messages - summary_keeps, "messages": messages - summary_keeps}}}) + "\n")


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
    cases = {"50": (50, None), "5,000": (5000, None), "5,000 with a summary in place": (5000, 20)}
    for name, (size, keeps) in cases.items():
        path = root / f"h{size}-{keeps}.jsonl"
        seed(path, size, keeps)
        engines[name] = engine_for(path)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.prompts):
        for name, engine in engines.items():
            samples[name].append(await per_prompt(engine))
    small = statistics.median(samples["50"])
    print("### P5: per-prompt engine overhead (instant in-process model, memory off)\n")
    print("| stored messages | median per prompt (ms) | ratio to 50 |\n|---|---|---|")
    for name in cases:
        median = statistics.median(samples[name])
        print(f"| {name} | {median * 1000:.2f} | {median / small:.2f}x |")
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
