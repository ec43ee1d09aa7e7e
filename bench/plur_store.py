"""Build a real PLUR 0.20.0 store of a given size in seconds, in the server's own format.

Going through the server is too slow for a year of use (every write rewrites a whole YAML
file: 6,000 captures into a growing `episodes.yaml` take most of an hour), so the files are
written here: `engrams.yaml` (a mapping with an `engrams` list, each engram with the fields
`plur_learn` writes) and `episodes.yaml` (a list of episodes as `plur_capture` writes them).
Scalars are JSON-quoted, which YAML reads as the same strings. The server then rewrites both
files in its own dump once (one learn, one capture: `settle`), and `plur_status` must count
what was written (`prove`), so a format the server did not read fails the build.

Texts are drawn from a fixed vocabulary with Zipf-like frequencies (seeded), so keyword search
has realistic work to do: common words match many items, rare ones few.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, NamedTuple

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ber", "dan", "fel", "gor", "hal", "jin", "kor",
              "lum", "mar", "nor", "pel", "quin", "ros", "sel", "tam", "ul", "ven", "wik", "yar", "zo"]
_COMMON = ("the a of to and in is for on with that this it as be by or from at use when not".split())
_DOMAIN = ("deploy branch test config server cache database query index log error build release review "
           "commit merge docker yaml json api token request response timeout retry queue worker schema "
           "migration backup restore monitor alert metric latency thread memory file folder path script").split()


def vocabulary(size: int = 4000, seed: int = 7) -> list[str]:
    """`size` distinct words: the domain's own first (they are the frequent ones), then made-up ones."""
    rng = random.Random(seed)
    words = list(dict.fromkeys(_DOMAIN))
    seen = set(words) | set(_COMMON)
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


class Prose:
    """Seeded sentences over the vocabulary, Zipf-weighted (rank r drawn with weight 1/r)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary()
        total, self.cumulative = 0.0, []
        for rank in range(len(self.words)):
            total += 1.0 / (rank + 1)
            self.cumulative.append(total)

    def sentence(self, words: int) -> str:
        picked = self.rng.choices(self.words, cum_weights=self.cumulative, k=words)
        mixed = [w if self.rng.random() > 0.35 else f"{self.rng.choice(_COMMON)} {w}" for w in picked]
        return " ".join(mixed).capitalize() + "."

    def text(self, size: int) -> str:
        parts: list[str] = []
        length = 0
        while length < size:
            parts.append(self.sentence(self.rng.randint(8, 18)))
            length += len(parts[-1]) + 1
        return " ".join(parts)[:size].rstrip()


_NON_WORD = re.compile(r"[^\w\s]", re.UNICODE)


def content_hash(statement: str) -> str:
    """PLUR's `computeContentHash`: sha256 of the lower-cased statement without punctuation."""
    normalized = re.sub(r"\s+", " ", _NON_WORD.sub("", statement.lower())).strip()
    return hashlib.sha256(normalized.encode()).hexdigest()


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def engram(ident: str, statement: str, created: datetime, *, pinned: bool, tags: list[str],
           source: str | None) -> dict[str, Any]:
    """One engram with the fields `plur_learn` writes (0.20.0), `pinned` as tmg's learns set it."""
    stamp = _iso(created)
    record: dict[str, Any] = {
        "id": ident, "version": 2, "status": "active", "consolidated": False, "type": "behavioral",
        "scope": "global", "visibility": "private", "created_at": stamp, "updated_at": stamp,
        "statement": statement,
    }
    if source:
        record["source"] = source
    record |= {
        "derivation_count": 1, "pack": None, "abstract": None, "derived_from": None,
        "knowledge_type": {"memory_class": "semantic", "cognitive_level": "apply"},
        "tags": tags,
        "activation": {"retrieval_strength": 0.7, "storage_strength": 1, "frequency": 1,
                       "last_accessed": created.strftime("%Y-%m-%d")},
        "associations": [], "knowledge_anchors": [],
        "provenance": {"origin": source or "direct", "chain": [], "signature": None, "license": "cc-by-sa-4.0"},
        "attribution": {"asserted_by": "unidentified", "runtime": {"name": "plur-core"}},
        "feedback_signals": {"positive": 0, "negative": 0, "neutral": 0},
        "polarity": None, "content_hash": content_hash(statement), "commitment": "leaning",
        "write_count": 1, "injection_count": 0,
        "sources": [{"scope": "global", "session_id": None, "stored_at": stamp}],
        "recurrence_count": 0, "engram_version": 1, "episode_ids": [],
    }
    if pinned:
        record["pinned"] = True
    return record


def _block(value: Any, indent: int) -> list[str]:
    """`value` as block YAML lines (mappings and lists), scalars JSON-quoted."""
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:")
                lines += _block(item, indent + 2)
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
        return lines
    lines = []
    for item in value:
        if isinstance(item, (dict, list)) and item:
            inner = _block(item, indent + 2)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines += inner[1:]
        else:
            lines.append(f"{pad}- {_scalar(item)}")
    return lines


def _scalar(value: Any) -> str:
    if value == {}:
        return "{}"
    if value == []:
        return "[]"
    return json.dumps(value, ensure_ascii=False)


class Volume(NamedTuple):
    """What a store holds: engrams (how many pinned) and episodes of about `episode_bytes`."""

    engrams: int
    pinned: int
    episodes: int
    episode_bytes: int


def build(plur_dir: Path, volume: Volume, *, days: int, seed: int = 1,
          extra_pinned: tuple[str, ...] = ()) -> None:
    """Write `engrams.yaml` and `episodes.yaml` under `plur_dir` for `volume`, spread over `days`
    days ending yesterday; `extra_pinned` statements are added pinned (the seeded instruction)."""
    plur_dir.mkdir(parents=True, exist_ok=True)
    prose = Prose(seed)
    end = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(days=1)
    start = end - timedelta(days=max(days, 1))
    span = (end - start).total_seconds()
    count = volume.engrams
    stamps = sorted(start + timedelta(seconds=prose.rng.random() * span) for _ in range(count))
    per_day: dict[str, int] = {}
    engrams = []
    pinned_at = set(prose.rng.sample(range(count), min(volume.pinned, count))) if count else set()
    for index, created in enumerate(stamps):
        day = created.strftime("%Y-%m-%d")
        per_day[day] = per_day.get(day, 0) + 1
        pinned = index in pinned_at
        statement = prose.sentence(prose.rng.randint(6, 16))
        if pinned:
            statement = prose.rng.choice(["From now on, ", "Always ", "Never ", "Please remember: "]) + \
                statement[0].lower() + statement[1:]
        origin = "origin:user" if pinned else "origin:answer"
        engrams.append(engram(f"ENG-{day}-{per_day[day]:03d}", statement, created, pinned=pinned,
                              tags=[f"session:bench-{index // 3}", "mode:default", origin],
                              source="user" if pinned else None))
    for offset, statement in enumerate(extra_pinned):
        engrams.append(engram(f"ENG-{end:%Y-%m-%d}-{900 + offset}", statement, end, pinned=True,
                              tags=["mode:default", "origin:user"], source="user"))
    lines = ["engrams:"] + _block(engrams, 2)
    (plur_dir / "engrams.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    episodes = []
    moments = sorted(start + timedelta(seconds=prose.rng.random() * span) for _ in range(volume.episodes))
    for index, moment in enumerate(moments):
        millis = int(moment.timestamp() * 1000)
        tail = "".join(prose.rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(4))
        size = max(40, int(prose.rng.gauss(volume.episode_bytes, volume.episode_bytes / 4)))
        episodes.append({"id": f"EP-{millis}-{tail}", "summary": prose.text(size), "agent": "default",
                         "session_id": f"bench-{index // 3}", "timestamp": _iso(moment)})
    (plur_dir / "episodes.yaml").write_text("\n".join(_block(episodes, 0)) + "\n" if episodes else "[]\n",
                                            encoding="utf-8")
