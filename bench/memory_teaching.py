"""What the shipped tier learns from what people type: precision and recall on the teaching corpus.

Every labelled session of a corpus part is replayed through tmg's own learning hook (LEARN full,
the shipped config's cap), the way a session feeds it: each prompt's typed words apart from what
was piped with it, the previous answer, the tool output the model read stored with the turn.
What the hook writes (`plur_learn` payloads, checked against the real schemas by fakeplur, or
sent to the real PLUR with `--server real`) is compared with the labels:

- a written statement is right when it holds >= 80% of the labelled statement's words and adds
  at most as many words again (at least 10): the carrying sentences, not the whole prompt; one
  statement that is the one sentence of two teachings of its prompt (a fact and the instruction it
  explains) finds both when it holds each and adds at most as many words again as the two
  together (the table says how many were found so, and the recall without them);
- precision: right statements / written statements; recall: labelled teachings written, for
  instructions and corrections (the goal: P >= 0.9, R >= 0.95 on the held-out part), and for
  facts the user asked to keep; pinned: written pinned exactly when labelled standing; scope:
  written to the project scope exactly when labelled project;
- from piped or tool text: statements that hold words only piped or tool text had (goal 0);
- secrets: statements holding one of the corpus's canary values, or a password-shaped word (letters
  and digits) of a prompt labelled as holding a secret (goal 0).
Cost: the scorer per prompt (median over the corpus, and a 16 KB paste), and loading it, in a
fresh process from bytecode (what the first teaching prompt of a process pays; prompts the
word gate lets pass by load nothing).

Parts: `heldout20` (written blind by two writers, kept out of training and of `--part all` until
its `--shipped` runs), `heldout19`, `heldout18`, `heldout17` and `heldout16` (written blind, kept out of training and of
`--part all` until their `--shipped` runs, then trained on), `heldout15`, `heldout14`, `heldout13` and `heldout10` (each written blind, run once with the shipped model, then
worked on and trained on; the next blind part goes in train_teaching.BLIND until its run), `train12`
and `train11` (training parts written for the round after held-out 9), `heldout9` (written blind,
run once with the shipped model, then trained on), `train8`
and `train7` (training parts for the learned reading), `heldout6` (written blind before the
learned reading, run once with the shipped model, then trained on), `heldout5` (written blind
before its round's changes, run once before any change it prompts), `heldout4` (written after the
held-out 3 fixes, run once), `heldout3`, `heldout2`, `heldout` (each run once, then its misses were
worked on, so they are development data now), `tune`, and `old` (e2e/data/memory_sessions.json).
By default each part is scored with a learned model trained on every other part, never on the one
it scores (bench/train_teaching.py); `--shipped` scores with the one tmg ships.

Run: ./.venv/bin/python bench/memory_teaching.py [--part NAME|all] [--server fake|real] [--shipped] [--misses]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tmg.config.model import Config, MemoryConfig  # noqa: E402
from tmg.engine.turn import Turn  # noqa: E402
from tmg.llm.gateway import Completion, Usage  # noqa: E402
from tmg.memory.client import PlurClient  # noqa: E402
from tmg.memory.learning import LearningHook  # noqa: E402
from tmg.project import Project  # noqa: E402
from tmg.memory.runtime import ReadyClient  # noqa: E402
from tmg.memory.scrub import make_scrubber  # noqa: E402
from tmg.memory.grounding import content, ground  # noqa: E402

PARTS = {"heldout23": ROOT / "bench" / "data" / "teaching_heldout23.json",
         "heldout22": ROOT / "bench" / "data" / "teaching_heldout22.json",
         "heldout21": ROOT / "bench" / "data" / "teaching_heldout21.json",
         "heldout20": ROOT / "bench" / "data" / "teaching_heldout20.json",
         "heldout19": ROOT / "bench" / "data" / "teaching_heldout19.json",
         "heldout18": ROOT / "bench" / "data" / "teaching_heldout18.json",
         "heldout17": ROOT / "bench" / "data" / "teaching_heldout17.json",
         "heldout16": ROOT / "bench" / "data" / "teaching_heldout16.json",
         "heldout15": ROOT / "bench" / "data" / "teaching_heldout15.json",
         "heldout14": ROOT / "bench" / "data" / "teaching_heldout14.json",
         "heldout13": ROOT / "bench" / "data" / "teaching_heldout13.json",
         "heldout10": ROOT / "bench" / "data" / "teaching_heldout10.json",
         "train12": ROOT / "bench" / "data" / "teaching_train12.json",
         "train11": ROOT / "bench" / "data" / "teaching_train11.json",
         "heldout9": ROOT / "bench" / "data" / "teaching_heldout9.json",
         "train8": ROOT / "bench" / "data" / "teaching_train8.json",
         "heldout6": ROOT / "bench" / "data" / "teaching_heldout6.json",
         "train7": ROOT / "bench" / "data" / "teaching_train7.json",
         "heldout5": ROOT / "bench" / "data" / "teaching_heldout5.json",
         "heldout4": ROOT / "bench" / "data" / "teaching_heldout4.json",
         "heldout3": ROOT / "bench" / "data" / "teaching_heldout3.json",
         "heldout2": ROOT / "bench" / "data" / "teaching_heldout2.json",
         "heldout": ROOT / "bench" / "data" / "teaching_heldout.json",
         "tune": ROOT / "bench" / "data" / "teaching_tune.json",
         "old": ROOT / "e2e" / "data" / "memory_sessions.json"}
PROJECT_ID = "github.com/acme/bench"
CONTEXT = ' (correcting the earlier answer: "'
# Values in the corpora that must never be written anywhere.
CANARIES = ("Wint3r-Ledger-88", "Tr0ub4dor&3", "hunter2-corpus", "CorpusKey0123456789", "eyJzdWIiOiJjb3JwdXMtdXNlciJ9",
            "Corpus-Pass-4417", "canary-token-9x2", "Canary-Quartz-6621", "bluefin-canary-93", "sk-canary-h16-0000",
            "Canary-Garnet-4417", "walrus-canary-31", "sk-canary-h17-0000", "Canary-Onyx-8830", "heron-canary-62", "sk-canary-h18-0000",
            "sk-canary-h19-0000", "Canary-Topaz-5512", "otter-canary-47", "sk-canary-h20-0000", "Canary-Beryl-7391", "lynx-canary-58",
            "sk-canary-h21-0000", "Canary-Garnet-4826", "otter-canary-93", "sk-canary-h22-0000", "Canary-Onyx-5173",
            "heron-canary-27", "sk-canary-h23-0000", "Canary-Jasper-6042", "marten-canary-71")
_WORD = re.compile(r"[\w'-]+")


def _values(text: str) -> set[str]:
    """The words of a prompt shaped like a password or a key: letters and digits, 6 or more."""
    return {w.strip(".,;:!?\"'()") for w in text.split()
            if len(w) >= 6 and any(c.isdigit() for c in w) and any(c.isalpha() for c in w)}


def words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def matches(expected: str, written: str) -> bool:
    want, got = words(expected), words(written)
    return len(want & got) >= 0.8 * len(want) and _adds_little(got, want)


def _holding(labels: list[str], got: set[str]) -> list[int]:
    """Which labels have >= 80% of their words in a statement's words."""
    return [i for i, e in enumerate(labels) if len(words(e) & got) >= 0.8 * len(words(e))]


def _adds_little(got: set[str], union: set[str]) -> bool:
    """A statement adds at most as many words again as the labels it holds (at least 10)."""
    return len(got - union) <= max(10, len(union))


def also_covers(others: list[str], hit: str, written: str) -> list[int]:
    """Which of `others` (labels of the same prompt) the statement that matched `hit` holds too,
    when it is their one sentence ("I play capo 2 on everything, so give me shapes relative to the
    capo from now on" is a fact and an instruction): each holds >= 80% of its words in it, and it
    adds at most as many words again as the labels together."""
    got = words(written)
    held = _holding(others, got)
    union = words(hit).union(*(words(others[i]) for i in held))
    return held if held and _adds_little(got, union) else []


def held_together(labels: list[str], written: str) -> list[int]:
    """Which `labels` of one prompt a statement holds together when none matches it alone: two or
    more, by the rule `also_covers` applies once one of them matches."""
    got = words(written)
    held = _holding(labels, got)
    union = set().union(*(words(labels[i]) for i in held))
    return held if len(held) > 1 and _adds_little(got, union) else []


@dataclass
class Score:
    part: str
    sessions: int = 0
    turns: int = 0
    written: int = 0
    right: int = 0
    wanted_ic: int = 0  # labelled instructions and corrections
    found_ic: int = 0
    wanted_facts: int = 0
    found_facts: int = 0
    # Labels found only because one statement held them with another label of its prompt (their
    # one sentence): counted in found_ic / found_facts, and said apart in the table.
    shared_ic: int = 0
    shared_facts: int = 0
    pinned_ok: int = 0
    scope_ok: int = 0
    from_material: int = 0  # statements holding words only piped or tool text had
    secrets: int = 0
    # The remember tool, as a note (no model here): misses the tool would keep in the labelled
    # words if the model called it with them; piped or tool sentences it would accept (goal 0).
    groundable: int = 0
    tool_from_material: int = 0
    misses: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    def ratio(self, a: int, b: int) -> str:
        return f"{a / b:.2f} ({a}/{b})" if b else "-"


class Recorder:
    """A ToolCaller in front of the server that keeps every plur_learn payload."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.learns: list[dict[str, Any]] = []

    @property
    def tool_names(self) -> frozenset[str]:
        return self.inner.tool_names

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 3.0) -> Any:
        target = arguments.get("action") if name == "plur_admin" else name
        if target == "plur_learn":
            self.learns.append(arguments.get("args", arguments) if name == "plur_admin" else arguments)
        return await self.inner.call_tool(name, arguments, timeout)


async def score_part(part: str, caller: Any, root: Path) -> Score:
    corpus = json.loads(PARTS[part].read_text())["sessions"]
    score = Score(part, sessions=len(corpus))
    config = Config(memory=MemoryConfig(enabled=True, learn="full"))
    for number, session in enumerate(corpus):
        sid = f"bench-{part}-{number:03d}"
        folder = root / sid
        folder.mkdir(parents=True)
        files = set(session.get("project_files", []))
        for name in files:  # "Makefile", "src/app.py" are files; "src/components" a folder
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.mkdir() if "." not in path.name and path.name.islower() else path.write_text("x\n")
        recorder = Recorder(caller)
        hook = LearningHook(ReadyClient(PlurClient(recorder, timeout=30)), lambda: config, scrub=make_scrubber(),
                            project=Project(PROJECT_ID, folder), session_dir=folder)
        previous = ""
        for index, turn in enumerate(session["turns"], 1):
            score.turns += 1
            before = len(recorder.learns)
            typed = turn["user"]
            material = "\n\n".join(t for t in (turn.get("piped"), turn.get("tool")) if t)
            sent = f"{typed}\n\n{turn['piped']}" if turn.get("piped") else typed
            t = Turn(index, 1, sent, sid, "default", typed_text=typed, previous_answer=previous)
            t.completion = Completion(turn["answer"], [], Usage())
            if turn.get("tool"):
                t.stored = [{"role": "tool", "tool_call_id": "c1", "content": turn["tool"]}]
            await hook.after_turn(t, None)
            await hook.drain(30)
            _judge(score, session.get("id") or session["name"], turn, recorder.learns[before:], material)
            previous = turn["answer"]
    return score


def _judge(score: Score, sid: str, turn: dict[str, Any], learns: list[dict[str, Any]], material: str) -> None:
    expected = list(turn["teach"])
    used: set[int] = set()
    shared: set[int] = set()  # found in a statement that matched another label of this prompt
    for payload in learns:
        statement = payload["statement"].split(CONTEXT, 1)[0]
        score.written += 1
        score.secrets += any(c in json.dumps(payload) for c in CANARIES) or (
            turn.get("why") == "secret" and bool(_values(turn["user"]) & set(statement.split())))
        if material and words(statement) - words(turn["user"]):
            score.from_material += 1
        hit = next((i for i, e in enumerate(expected) if i not in used and matches(e["statement"], statement)), None)
        if hit is None:  # none alone: several of them, their one sentence ("I teach Year 9, so keep it simple")
            rest = [i for i in range(len(expected)) if i not in used]
            together = held_together([expected[i]["statement"] for i in rest], statement)
            hit = rest[together[0]] if together else None
        if hit is None:
            score.wrong.append(f"{sid}: {statement[:90]!r}")
            continue
        used.add(hit)
        score.right += 1
        label = expected[hit]
        rest = [i for i in range(len(expected)) if i not in used]
        for k in also_covers([expected[i]["statement"] for i in rest], label["statement"], statement):
            used.add(rest[k])
            shared.add(rest[k])
        pinned_ok = (payload.get("pinned") is True) == label["standing"]
        scope_ok = (payload.get("scope") == f"project:{PROJECT_ID}") == (label["scope"] == "project")
        score.pinned_ok += pinned_ok
        score.scope_ok += scope_ok
        if not pinned_ok or not scope_ok:
            score.wrong.append(f"{sid}: {'pinned' if not pinned_ok else ''} {'scope' if not scope_ok else ''} "
                               f"differ from the label: {statement[:70]!r}")
    for index, label in enumerate(expected):
        found = index in used
        if label["kind"] == "fact":
            score.wanted_facts += 1
            score.found_facts += found
            score.shared_facts += index in shared
        else:
            score.wanted_ic += 1
            score.found_ic += found
            score.shared_ic += index in shared
        if not found:
            score.misses.append(f"{sid}: {label['kind']} {label['statement'][:90]!r}")
            span = ground(label["statement"], [turn["user"]])
            score.groundable += span is not None and matches(label["statement"], span.span)
    for line in (s for s in re.split(r"(?<=[.!?])\s+|\n", material) if len(content(s)) >= 2):
        score.tool_from_material += ground(line, [turn["user"]]) is not None


def table(scores: list[Score], server: str, shipped: bool) -> str:
    model = ("the shipped learned model (a part it was trained on is scored in-sample)" if shipped else
             "for each part, a learned model trained on every other part (never on the part it scores)")
    lines = [f"Server: {server}; LEARN full, MAX_LEARNS_PER_SESSION 3; a statement is right when it holds >= 80% of "
             f"the label's words and adds at most as many again; {model}.", "",
             "| part | sessions (turns) | precision | recall: instructions + corrections | recall: facts to keep "
             "| pinned as labelled | scope as labelled | from piped or tool text | secrets written |",
             "|---|---|---|---|---|---|---|---|---|"]
    for s in scores:
        lines.append(f"| {s.part} | {s.sessions} ({s.turns}) | {s.ratio(s.right, s.written)} | "
                     f"{s.ratio(s.found_ic, s.wanted_ic)} | {s.ratio(s.found_facts, s.wanted_facts)} | "
                     f"{s.ratio(s.pinned_ok, s.right)} | {s.ratio(s.scope_ok, s.right)} | {s.from_material} | "
                     f"{s.secrets} |")
    lines += ["", "Of those found, held in one statement with another teaching of their prompt (their one sentence, "
              "\"I play capo 2 on everything, so give me shapes relative to the capo\"); recall without them:", "",
              "| part | instructions + corrections: shared, recall without | facts: shared, recall without |",
              "|---|---|---|"]
    for s in scores:
        lines.append(f"| {s.part} | {s.shared_ic}, {s.ratio(s.found_ic - s.shared_ic, s.wanted_ic)} | "
                     f"{s.shared_facts}, {s.ratio(s.found_facts - s.shared_facts, s.wanted_facts)} |")
    lines += ["", "The remember tool (a note: no model here, so what a model would call it with is not measured): "
              "misses above it would keep in the labelled words, were the model to call it with them; sentences "
              "of piped or tool text it would accept (goal 0).", "",
              "| part | misses the tool could keep | piped or tool sentences accepted |", "|---|---|---|"]
    for s in scores:
        misses = s.wanted_ic + s.wanted_facts - s.found_ic - s.found_facts
        lines.append(f"| {s.part} | {s.ratio(s.groundable, misses)} | {s.tool_from_material} |")
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def model_without(part: str, root: Path, shipped: bool) -> Iterator[None]:
    """The learned reading scores `part` with a model trained on every other part (it never saw
    the part it is measured on), unless `shipped`: the one tmg ships (a part it was trained on
    is then scored in-sample, said so in the table)."""
    from bench.train_teaching import BLIND, CORPORA, train, write
    from tmg.memory.teaching import learned

    if shipped:
        yield
        return
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"model-without-{part}.json"
    others = [p for p in CORPORA if p != part and p not in BLIND]
    write(train(others), path, others)
    shipped_model = learned.MODEL
    learned.MODEL = path
    learned.weights.cache_clear()
    try:
        yield
    finally:
        learned.MODEL = shipped_model
        learned.weights.cache_clear()


def cost() -> str:
    """The scorer's cost per prompt and its load, in this process and a fresh one from bytecode."""
    from tmg.memory.teaching import find_teachings, might_teach

    prompts = []
    for path in PARTS.values():
        for session in json.loads(path.read_text())["sessions"]:
            previous = ""
            for turn in session["turns"]:
                prompts.append((turn["user"], previous))
                previous = turn["answer"]
    find_teachings("from now on answer briefly", "ok")  # loaded
    per = []
    for text, previous in prompts:
        start = time.perf_counter()
        for _ in range(5):
            find_teachings(text, previous)
        per.append((time.perf_counter() - start) / 5)
    gated = sum(1 for text, previous in prompts if not might_teach(text, previous))
    paste = "I went to the store and bought some milk, and then I came back home.\n" * 240 + "also, from now on use tabs"
    start = time.perf_counter()
    find_teachings(paste, "ok")
    paste_ms = (time.perf_counter() - start) * 1000
    probe = ("import time, re, dataclasses, typing; t = time.perf_counter(); "
             "from tmg.memory.teaching import prewarm; prewarm(); print((time.perf_counter() - t) * 1000)")
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, check=True)  # bytecode
    loads = [float(subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                                  check=True).stdout) for _ in range(7)]
    return (f"Cost: {len(prompts)} corpus prompts, median {statistics.median(per) * 1e6:.0f} µs, max "
            f"{max(per) * 1000:.2f} ms per prompt once loaded; {gated} of them ({gated / len(prompts):.0%}) "
            f"stopped by the word gate (a few µs, nothing loaded); a 16 KB paste {paste_ms:.1f} ms; loading the "
            f"scorer and its learned weights in a fresh process {statistics.median(loads):.1f} ms (median of 7). "
            "No model call: 0 tokens.\n")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=(*PARTS, "all"), default="all")
    parser.add_argument("--server", choices=("fake", "real"), default="fake")
    parser.add_argument("--misses", action="store_true", help="list what was missed or wrongly written")
    parser.add_argument("--shipped", action="store_true",
                        help="score every part with the shipped learned model, not one trained without that part")
    args = parser.parse_args()
    from bench.train_teaching import BLIND

    # A blind part waits for its one run (`--part NAME --shipped`), so tuning never sees its figure.
    parts = [p for p in PARTS if p not in BLIND] if args.part == "all" else [args.part]
    root = Path(tempfile.mkdtemp(prefix="tmg-teaching-"))
    scores = []
    if args.server == "fake":
        from tests.support.doubles import FakePlurCaller

        for part in parts:
            with model_without(part, root, args.shipped):
                scores.append(await score_part(part, FakePlurCaller("full"), root / part))
    else:
        from tests.support.plur_server import real_plur_spec
        from tmg.mcp.connection import McpConnection

        for part in parts:
            conn = McpConnection(real_plur_spec(root / f"plur-{part}", "full"), start_timeout=30)
            await conn.start()
            try:
                with model_without(part, root, args.shipped):
                    scores.append(await score_part(part, conn, root / part))
            finally:
                await conn.close()
    print(table(scores, "fakeplur (in process)" if args.server == "fake" else "real PLUR 0.20.0", args.shipped))
    print(cost())
    if args.misses:
        for s in scores:
            for line in s.misses:
                print(f"missed [{s.part}] {line}")
            for line in s.wrong:
                print(f"wrong [{s.part}] {line}")


if __name__ == "__main__":
    asyncio.run(main())
