"""What each learning design stores, and what comes back: the memory-quality report (issue 11).

Replays the scripted sessions of `e2e/data/memory_sessions.json` through tmg's own learning hook
and session-end flush into a fresh PLUR store per design, then asks, as a new session would, for
recall on prompts unrelated to any session (through tmg's own injector) and reports per design:

- engrams stored per session (what makes PLUR's inject slower as the store grows);
- the user's standing instructions recalled, in words, on the unrelated prompts (target 100%);
- model answers injected as instructions (target 0): under the block's instructions heading, or,
  for the designs whose block had one "follow them" heading for every note, anywhere in it;
- duplicates in the store, and secrets in it.

Designs:
- `answers-as-engrams`: the old shipped default (LEARN batch): every answer one engram;
- `old-full`: the old `full`: answers as engrams, plus the user's instructions unpinned;
- `batch+pinned`: answers as engrams tagged origin:answer (shown as notes), instructions pinned;
- `ingest+pinned`: instructions pinned (as shipped-full); from each answer only what PLUR's own
  extractor (`plur_ingest extract_only`, regular expressions) finds, as engrams tagged origin:answer;
- `shipped-full`: today's `full`: what the user taught pinned (tmg.memory.teaching), answers not written.

Run: ./.venv/bin/python bench/memory_quality.py [--server real|fake]   (real needs node; default real)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.plur_server import fakeplur_spec, real_plur_spec  # noqa: E402
from tmg.config.model import Config, MemoryConfig  # noqa: E402
from tmg.context.pipeline import TurnContext  # noqa: E402
from tmg.engine.turn import Turn  # noqa: E402
from tmg.llm.gateway import Completion, Usage  # noqa: E402
from tmg.mcp.connection import McpConnection  # noqa: E402
from tmg.memory import payloads  # noqa: E402
from tmg.memory.client import PlurClient  # noqa: E402
from tmg.memory.injector import INSTRUCTIONS_HEADING, NOTES_HEADING, MemoryInjector  # noqa: E402
from tmg.memory.learning import LearningHook  # noqa: E402
from tmg.memory.runtime import ReadyClient  # noqa: E402
from tmg.memory.scrub import make_scrubber  # noqa: E402

CORPUS = ROOT / "e2e" / "data" / "memory_sessions.json"
PROBES = ("write a haiku about the sea", "explain the difference between TCP and UDP",
          "what is the capital of Australia?")
DESIGNS = ("answers-as-engrams", "old-full", "batch+pinned", "ingest+pinned", "shipped-full")
SECRET_VALUES = ("hunter2-corpus", "CorpusKey0123456789", "s3cret-corpus", "eyJzdWIiOiJjb3JwdXMtdXNlciJ9")


@dataclass
class Figures:
    design: str
    sessions: int = 0
    engrams: int = 0
    episodes: int = 0
    instructions: int = 0
    recalled: int = 0  # (instruction, probe) pairs whose words were in the block
    asks: int = 0  # (instruction, probe) pairs asked
    answers_as_instructions: int = 0
    duplicates: int = 0
    secrets: int = 0
    refused: int = 0  # batch items the server refused one by one (lost silently before issue 11)
    extracted: list[str] = field(default_factory=list)  # ingest+pinned: what the extractor made of answers


def _turn(session: str, index: int, user: str, answer: str) -> Turn:
    turn = Turn(index, 1, user, session, "default")
    turn.completion = Completion(answer, [], Usage())
    return turn


async def run_design(design: str, corpus: list[dict], spec) -> Figures:
    conn = McpConnection(spec, start_timeout=30)
    await conn.start()
    try:
        client = PlurClient(conn, timeout=30)
        figures = Figures(design, sessions=len(corpus))
        learn = "full" if design in ("shipped-full", "ingest+pinned") else "batch"
        config = Config(memory=MemoryConfig(enabled=True, learn=learn, max_learns_per_session=3))
        instructions: list[str] = []
        answers: list[str] = []
        for number, session in enumerate(corpus):
            sid = f"bench-{number:02d}"
            old = design in ("answers-as-engrams", "old-full")  # no scrubber then
            hook = LearningHook(ReadyClient(client), lambda: config, scrub=(lambda t: t) if old else make_scrubber())
            learned = 0
            for index, turn in enumerate(session["turns"], 1):
                await hook.after_turn(_turn(sid, index, turn["user"], turn["answer"]), None)
                answers.append(turn["answer"])
                if turn.get("teach") and learned < 3:  # what the user taught (the corpus's labels)
                    learned += 1
                    instructions.append(turn["user"])
                    if design in ("old-full", "batch+pinned"):
                        await client.learn(hook._scrub(turn["user"]), payloads.session_tags(sid, "default", "user"),
                                           pinned=design == "batch+pinned")
                if design == "ingest+pinned":
                    found = await client.call("plur_ingest", {"content": hook._scrub(turn["answer"]),
                                                              "extract_only": True},
                                              lambda d: [c["statement"] for c in d["candidates"]])
                    extracted = found.value or []
                    figures.extracted += extracted
                    if extracted:
                        tags = payloads.session_tags(sid, "default", payloads.ANSWER_ORIGIN)
                        await client.learn_batch_items([{"statement": x, "tags": tags} for x in extracted])
            await hook.drain(30)
            items = hook.take_batch(sid)
            if items:
                if design == "old-full" or design == "answers-as-engrams":  # no origin then
                    items = [{"statement": i["statement"], "tags": [t for t in i["tags"] if not t.startswith("origin:")]}
                             for i in items]
                result = await client.learn_batch_items(items)
                figures.refused += len(result.value.failures) if result.ok and result.value else 0
        status = await client.status()
        figures.engrams, figures.episodes = status.value.engram_count, status.value.episode_count
        figures.instructions = len(instructions)
        old_block = design in ("answers-as-engrams", "old-full")
        for probe in PROBES:
            injector = MemoryInjector(ReadyClient(client))  # a new session: nothing cached
            ctx = TurnContext([{"role": "user", "content": probe}], replace(config, memory=replace(
                config.memory, inject_budget=2000)), 1, 1)
            await injector.apply(ctx)
            block = ctx.riders[0] if ctx.riders else ""
            followed = block if old_block else block.partition(NOTES_HEADING)[0]
            for instruction in instructions:
                figures.asks += 1
                figures.recalled += _words(instruction) in _words(block)
            figures.answers_as_instructions += sum(1 for a in answers if _words(a)[:60] in _words(followed))
        statements = await _all_statements(client, corpus)
        figures.duplicates = len(statements) - len({s.casefold() for s in statements})
        stored = " ".join(statements)
        figures.secrets = sum(1 for v in SECRET_VALUES if v in stored)
        return figures
    finally:
        await conn.close()


async def _all_statements(client: PlurClient, corpus: list[dict]) -> list[str]:
    """Every active engram's statement, found by recalling each session's words."""
    seen: dict[str, str] = {}
    pinned = await client.pinned()
    for engram in pinned.value or []:
        seen[engram.id] = engram.statement
    for session in corpus:
        for turn in session["turns"]:
            for text in (turn["user"], turn["answer"]):
                query = " ".join(re.findall(r"[A-Za-z]{4,}", text)[:12])
                if query:
                    found = await client.recall(query, 50)
                    for engram in found.value or []:
                        seen[engram.id] = engram.statement
    return list(seen.values())


def _words(text: str) -> str:
    return " ".join(text.split())


def table(rows: list[Figures], server: str) -> str:
    lines = [f"Server: {server} PLUR 0.20.0 (keyword search), {rows[0].sessions} sessions, "
             f"{len(PROBES)} unrelated probe prompts per design.", "",
             "| design | engrams / session | episodes | instructions recalled in words | answers injected as instructions | duplicates | secrets stored | batch items refused by the server |",
             "|---|---|---|---|---|---|---|---|"]
    for f in rows:
        share = f"{f.recalled}/{f.asks} ({f.recalled / f.asks:.0%})" if f.asks else "-"
        lines.append(f"| `{f.design}` | {f.engrams / f.sessions:.2f} ({f.engrams}) | {f.episodes} | {share} | "
                     f"{f.answers_as_instructions} | {f.duplicates} | {f.secrets} | {f.refused} |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", choices=("real", "fake"), default="real")
    args = parser.parse_args()
    corpus = json.loads(CORPUS.read_text())["sessions"]
    rows = []
    for design in DESIGNS:
        root = Path(tempfile.mkdtemp(prefix=f"tmg-memq-{design}-"))
        spec = real_plur_spec(root, "lean") if args.server == "real" else fakeplur_spec(root, "lean")
        rows.append(await run_design(design, corpus, spec))
    print(table(rows, args.server))
    for row in rows:
        if row.extracted:
            print(f"`{row.design}`: PLUR's extractor made {len(row.extracted)} engram(s) of the answers: "
                  + "; ".join(f'"{x}"' for x in row.extracted))


if __name__ == "__main__":
    asyncio.run(main())
