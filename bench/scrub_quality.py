"""How well the memory scrubber (tmg/memory/scrub.py) masks secrets and leaves prose alone.

Scores every line of `bench/data/scrub_corpus.json` (each labelled with the secrets it holds;
none for a line that must come through unchanged), per split: `tune` (the lines the rules were
shaped on) and `heldout` (written at the same time in other voices, never used to tune).

- a line is *flagged* when the scrubber changed it;
- precision: flagged lines that hold a secret / flagged lines;
- recall: lines whose every secret is gone / lines that hold a secret;
- exact: lines that hold a secret and came out as the line with each secret replaced by `***`
  and nothing else (the words around a secret are kept);
- speed: microseconds per line, the whole corpus scrubbed (median of 20 rounds).

Each line gets a fresh scrubber (a value remembered from one line never helps another).

Run: ./.venv/bin/python bench/scrub_quality.py [--show-misses]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmg.memory.scrub import MASK, make_scrubber  # noqa: E402

CORPUS = ROOT / "bench" / "data" / "scrub_corpus.json"


@dataclass
class Score:
    lines: int = 0
    positives: int = 0
    true_flags: int = 0
    false_flags: int = 0
    found: int = 0
    exact: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        flagged = self.true_flags + self.false_flags
        return self.true_flags / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.positives if self.positives else 1.0


def load(path: Path = CORPUS) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["items"]


def expected(text: str, secrets: list[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def score(items: list[dict]) -> dict[str, Score]:
    scores: dict[str, Score] = {}
    for item in items:
        s = scores.setdefault(item["split"], Score())
        text, secrets = item["text"], item["secrets"]
        out = make_scrubber()(text)
        s.lines += 1
        if not secrets:
            if out != text:
                s.false_flags += 1
                s.misses.append(f"masked prose: {text!r} -> {out!r}")
            continue
        s.positives += 1
        if out != text:
            s.true_flags += 1
        if all(secret not in out for secret in secrets):
            s.found += 1
            if out == expected(text, secrets):
                s.exact += 1
            else:
                s.misses.append(f"more than the secret masked: {text!r} -> {out!r}")
        else:
            s.misses.append(f"secret kept: {text!r} -> {out!r}")
    return scores


def speed(items: list[dict], rounds: int = 20) -> float:
    texts = [i["text"] for i in items]
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            make_scrubber()(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times) / len(texts) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show-misses", action="store_true", help="print every line scored wrong")
    args = parser.parse_args()
    items = load()
    scores = score(items)
    print("| split | lines | with a secret | precision | recall | exact (only the secret masked) |")
    print("|---|---|---|---|---|---|")
    for split in ("tune", "heldout"):
        s = scores[split]
        print(f"| {split} | {s.lines} | {s.positives} | {s.precision:.2f} | {s.recall:.2f} ({s.found}/{s.positives}) "
              f"| {s.exact}/{s.positives} |")
    print(f"\nspeed: {speed(items):.0f} µs per line ({len(items)} lines, a fresh scrubber each, median of 20 rounds)")
    if args.show_misses:
        for split in ("tune", "heldout"):
            for miss in scores[split].misses:
                print(f"{split}: {miss}")


if __name__ == "__main__":
    main()
