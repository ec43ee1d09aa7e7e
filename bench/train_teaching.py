"""Train the learned clause reading (tmg/memory/teaching/learned.py) from the labelled corpora.

Every clause of every typed turn that no veto rules out (the scorer's own segmentation, and its
features as the scorer computes them: judge.clause_features) is one example: a clause that lies
mostly inside a labelled statement is that label's kind, any other is "none". A softmax
over OUTCOMES, trained by AdaGrad with a small L2, in a fixed order (the same corpora give the
same weights); features seen only once are dropped, and so are weights too small to matter.

Run: ./.venv/bin/python bench/train_teaching.py [--without PART ...]   (writes learned_model.json)
The bench scores a part with a model trained without it: bench/memory_teaching.py --hold PART.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmg.memory.teaching import learned  # noqa: E402
from tmg.memory.teaching.judge import clause_features  # noqa: E402

CORPORA = {path.stem.removeprefix("teaching_"): path for path in sorted((ROOT / "bench" / "data").glob("teaching_*.json"))}
CORPORA["old"] = ROOT / "e2e" / "data" / "memory_sessions.json"
# Parts the shipped model is not trained on: a blind held-out part, until its first run is recorded.
BLIND: tuple[str, ...] = ()  # a blind part, until its blind runs are recorded (docs/memory-quality.md)
EPOCHS, RATE, L2, KEEP = 30, 0.3, 0.03, 0.02
TEACH_WEIGHT = 2.0  # a missed teaching costs more than a clause left alone: the rules guard precision


def examples(path: Path) -> list[tuple[list[str], int]]:
    out = []
    for session in json.loads(path.read_text())["sessions"]:
        previous = ""
        for turn in session["turns"]:
            typed = turn["user"]
            spans = [(typed.find(t["statement"]), t) for t in turn["teach"]]
            for clause, feats, _ruled in clause_features(typed, previous):
                label = 0
                for at, teach in spans:
                    inside = min(clause.end, at + len(teach["statement"])) - max(clause.start, at)
                    if at >= 0 and inside >= 0.5 * (clause.end - clause.start):
                        label = learned.OUTCOMES.index(teach["kind"])
                out.append((feats, label))
            previous = turn.get("answer") or ""
    return out


def train(parts: list[str]) -> learned.Weights:
    data = [example for part in parts for example in examples(CORPORA[part])]
    seen = Counter(name for feats, _ in data for name in set(feats))
    data = [([f for f in feats if seen[f] >= 2], label) for feats, label in data]
    k = len(learned.OUTCOMES)
    weights: dict[str, list[float]] = {}
    squares: dict[str, list[float]] = {}
    order = list(range(len(data)))
    shuffle = random.Random(21)
    for _ in range(EPOCHS):
        shuffle.shuffle(order)
        for i in order:
            feats, label = data[i]
            p = learned.probabilities(feats, weights)
            scale = TEACH_WEIGHT if label else 1.0
            for name in feats:
                row = weights.setdefault(name, [0.0] * k)
                acc = squares.setdefault(name, [1e-8] * k)
                for c in range(k):
                    grad = scale * (p[c] - (1.0 if c == label else 0.0)) + L2 * row[c]
                    acc[c] += grad * grad
                    row[c] -= RATE * grad / math.sqrt(acc[c])
    return {name: [round(w, 3) for w in row] for name, row in sorted(weights.items())
            if max(abs(w) for w in row) >= KEEP}


def write(weights: learned.Weights, path: Path, parts: list[str]) -> None:
    path.write_text(json.dumps({"trained_on": parts, "outcomes": list(learned.OUTCOMES), "weights": weights},
                               ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--without", action="append", default=[], choices=sorted(CORPORA),
                        help="a part to leave out (a held-out part written after the model must be left out)")
    parser.add_argument("--out", type=Path, default=learned.MODEL)
    args = parser.parse_args()
    parts = [p for p in CORPORA if p not in args.without and p not in BLIND]
    weights = train(parts)
    write(weights, args.out, parts)
    print(f"{len(weights)} features, trained on {', '.join(parts)} -> {args.out}")


if __name__ == "__main__":
    main()
