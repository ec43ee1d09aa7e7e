"""How well the memory scrubber (tmg/memory/scrub.py) masks secrets and leaves prose alone.

Scores every line of `bench/data/scrub_corpus.json` (each labelled with the secrets it holds;
none for a line that must come through unchanged), per split: `tune` (the lines the rules were
shaped on) and `heldout` (written at the same time in other voices, never used to tune).

- a line is *flagged* when the scrubber changed it;
- precision: flagged lines that hold a secret / flagged lines;
- recall: lines whose every secret is gone, every word of it / lines that hold a secret;
- exact: lines that hold a secret and came out as the line with each secret replaced by `***`
  and nothing else (the words around a secret are kept);
- speed: microseconds per line, the whole corpus scrubbed (median of 20 rounds), and for a 2 KB
  answer full of the words the patterns wait for but no secret (the slow case).

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


def leaked(text: str, out: str, secret: str) -> bool:
    """Some of `secret` is still in `out`: the whole of it, or one of its words (of 3 characters
    or more) that the line does not hold elsewhere ("*** Sky Over Paris" leaks a passphrase)."""
    if secret in out:
        return True
    outside = text.replace(secret, " ")
    return any(len(word) >= 3 and word in out and word not in outside for word in secret.split())


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
        if not any(leaked(text, out, secret) for secret in secrets):
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


# A 2 KB answer of the kind a coding chat gets, full of the words the patterns wait for
# ("password", "token", "key", "secret", "://") but holding no secret: the slow case.
ANSWER = ("To rotate the API key, open the settings page and create a new token; the old key stays valid "
          "for an hour. Store the secret in the vault, never in the repo, and read it from the environment "
          "(`os.environ['API_KEY']`). The password field on the login form is required, and a password "
          "reset sends a link to https://example.com/reset. Token buckets limit the request rate. ") * 5


def answer_speed(rounds: int = 200) -> float:
    scrub = make_scrubber()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        scrub(ANSWER)
        times.append(time.perf_counter() - start)
    assert scrub(ANSWER) == ANSWER, "the answer holds no secret: nothing may be masked"
    return statistics.median(times) * 1e6


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
    print(f"\nspeed: {speed(items):.0f} µs per line ({len(items)} lines, a fresh scrubber each, median of 20 rounds); "
          f"{answer_speed():.0f} µs for a {len(ANSWER)}-character answer full of secret words and no secret "
          "(median of 200)")
    if args.show_misses:
        for split in ("tune", "heldout"):
            for miss in scores[split].misses:
                print(f"{split}: {miss}")


if __name__ == "__main__":
    main()
