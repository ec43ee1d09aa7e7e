"""P10 of quality.md: seconds per prompt against a real llama.cpp server on a ~3,000-token session,
memory on vs off (target <= 1.2x; it was ~30x when the memory block sat in the system message and
so changed the request's prefix at token ~72 every prompt, making the server re-read the session).

Two tmg sessions, each in its own TMG_HOME: memory off, and memory on (fakeplur with 40 engrams,
eight of which match every prompt, and two pinned standing instructions; the shipped LEARN tier).
With memory on the instructions end the system message (unchanged while the set is) and recalled
notes ride with the latest user turn only when the session's recent prompts were not sent them, so
in the steady state (the same eight notes every prompt) nothing rides after the first prompt;
`--fresh` gives every timed prompt a note no prompt was sent before (its cost is that note's tokens
plus the previous answer, re-read after the old notes' place).
Each session is first grown to about --session-tokens by one-shots that pipe in chunks of this
repository's own docs (as a user would), then both take --rounds timed one-shots, alternating,
and the median seconds per prompt are compared. The seeding one-shots run with LEARN off (with
the shipped tier a piped chunk the instruction gate takes for "a standing instruction" is pinned
and then rides every prompt, so the store would measure that, not placement); the timed ones
with the shipped tier, or --learn. The memory store and the block's size in model tokens are
printed, and so are the server's own counts of tokens reused from its cache and evaluated per
prompt (from its log): the block, never stored, is always evaluated.

Each session talks to its own llama-cpp-python server (e2e/realmodel.py, SmolLM2-135M, n_ctx
--n-ctx): that server keeps ONE sequence in its KV cache and reuses the longest prefix the next
request shares with the last one, so two sessions alternating on one server would evict each
other every prompt and both would re-read everything (--shared-server shows that). Only one
server works at a time. A pass-through proxy in front of each (realmodel.ToolChoiceProxy)
records what tmg sent: the bench prints whether every memory-on request carried a memory block,
where it sat, and the session's size in the model's tokens (the server's /extras/tokenize/count
over the message texts; the chat template's few tokens per message aside).

Run: PYTHONPATH=$PWD ./.venv/bin/python bench/real_model_memory.py [--rounds N] [--max-tokens N]
     [--session-tokens N] [--n-ctx N] [--learn TIER] [--shared-server]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from _common import ROOT, scratch_env, timed, tmg_bin

from e2e import realmodel
from e2e.plur import FakePlur, instructions_part, memory_blocks, notes_part
from tmg.memory.injector import NOTES_HEADING, without_blocks

TOPICS = ["heron", "zebrafish", "cactus", "kestrel", "lighthouse", "saffron", "glacier", "marmot"]
FRESH = ["quartz", "tundra", "walrus", "juniper", "obsidian", "pelican", "mangrove", "basalt", "lynx", "orchid"]
PINNED = ["Always answer in one short sentence.", "Never use emoji in answers."]
AREAS = ["logging", "backups", "reviews", "docs", "tests", "YAML", "git", "releases"]
ENGRAMS = 40


def seed_engrams(fresh: bool = False) -> list[dict[str, Any]]:
    """40 engrams: one per topic that every prompt's words match (branch, deploy, from), the rest
    notes no prompt shares a word with; two pinned instructions; with `fresh`, one note per
    FRESH topic that only a prompt naming it matches."""
    matching = [{"statement": f"The {t} project deploys from the {t}-main branch"} for t in TOPICS]
    rest = [{"statement": f"Note {i} about {AREAS[i % len(AREAS)]}: keep change {i} small and reviewed"}
            for i in range(ENGRAMS - len(matching))]
    own = [{"statement": f"The {t} rota lives in the {t} wiki"} for t in FRESH] if fresh else []
    return matching + rest + own + [{"statement": p, "pinned": True} for p in PINNED]


def prompt(i: int, fresh: bool = False) -> str:
    if fresh:
        return f"Where is {FRESH[i % len(FRESH)]} kept?"
    return f"Which branch does {TOPICS[i % len(TOPICS)]} deploy from?"


def doc_chunks(size: int = 2000) -> list[str]:
    """This repository's own prose, cut at paragraph ends into pieces of about `size` characters."""
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "README.md", ROOT / "docs" / "memory-quality.md"))
    chunks, current = [], ""
    for para in re.split(r"\n\s*\n", text):
        current = f"{current}\n\n{para}" if current else para
        if len(current) >= size:
            chunks.append(current)
            current = ""
    return chunks + ([current] if current else [])


def session_tokens(server_url: str, request: dict) -> int:
    """The model's token count of a request's message texts, its memory block left out."""
    text = "\n".join(without_blocks(m["content"]) for m in request["messages"] if isinstance(m.get("content"), str))
    return count_tokens(server_url, text)


def count_tokens(server_url: str, text: str) -> int:
    r = httpx.post(server_url.removesuffix("/v1") + "/extras/tokenize/count", json={"input": text}, timeout=60)
    r.raise_for_status()
    return int(r.json()["count"])


_EVAL = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")


def evaluated(log: Path, count: int) -> list[tuple[int, int]]:
    """(tokens reused from the server's cache, tokens it evaluated) of the last `count` requests
    in its log (llama-cpp-python prints one such line per request that shares a prefix)."""
    return [(int(a), int(b)) for a, b in _EVAL.findall(log.read_text(errors="replace"))][-count:]


def run(tmg: str, env: dict[str, str], cwd: str, args: list[str], stdin: str = "") -> float:
    return timed([tmg, *args], stdin=stdin, env=env, cwd=cwd)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=16, help="answer bound, so generation does not dominate")
    parser.add_argument("--session-tokens", type=int, default=3000)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--learn", choices=("off", "capture", "batch", "full"),
                        help="MEMORY.LEARN of the memory-on session (default: the shipped tier)")
    parser.add_argument("--shared-server", action="store_true",
                        help="both sessions on one server (they evict each other's cached prefix)")
    parser.add_argument("--fresh", action="store_true",
                        help="every timed prompt's recall brings a note the session was never sent")
    args = parser.parse_args()
    problem = realmodel.missing()
    if problem:
        raise SystemExit(f"bench: {problem}")
    tmg = tmg_bin()
    cases = ("memory off", "memory on")
    with ExitStack() as stack:
        logdir = Path(tempfile.mkdtemp(prefix="tmg-bench-llama-"))
        servers, proxies, envs, seed_envs = {}, {}, {}, {}
        for name in cases:
            if args.shared_server and servers:
                server = next(iter(servers.values()))
            else:
                server = stack.enter_context(realmodel.LlamaServer(n_ctx=args.n_ctx, log=logdir / f"{name}.log"))
            servers[name] = server
            proxies[name] = stack.enter_context(realmodel.ToolChoiceProxy(server.url))  # one per session: its requests
        cwd = tempfile.mkdtemp(prefix="tmg-bench-work-")
        for name in cases:
            env, home = scratch_env(LITELLM_LOCAL_MODEL_COST_MAP="True")
            text = (f"PROVIDERS:\n  local:\n    MODEL: openai/smollm2\n    URL: {proxies[name].url}\n"
                    f"    API_KEY: none\n    MAX_TOKENS: {args.max_tokens}\n")
            if name == "memory on":
                text += FakePlur(Path(home)).entry(seed=seed_engrams(args.fresh))
                del env["TMG_MEMORY_ENABLED"]
            else:
                text += "MEMORY:\n  ENABLED: false\n"
            learn = {"timed": args.learn, "seeding": "off"} if name == "memory on" else {}
            for phase, target in (("timed", envs), ("seeding", seed_envs)):
                # The seeding prompts teach nothing: the store holds the 40 seeds when timing starts.
                config = Path(home) / f"{phase}.yaml"
                config.write_text(text + (f"MEMORY:\n  LEARN: {learn[phase]}\n" if learn.get(phase) else ""))
                target[name] = dict(env, TMG_CONFIG=str(config))
        try:
            # Grow each session to the target with piped chunks of prose (untimed).
            chunks = doc_chunks()
            sizes = {}
            for name in cases:
                run(tmg, seed_envs[name], cwd, ["--new", "-r", "In one line, what is this about?"], chunks[0])
                used = 1
                while True:
                    sizes[name] = session_tokens(servers[name].url, proxies[name].requests[-1])
                    if sizes[name] >= args.session_tokens:
                        break
                    if used == len(chunks):
                        raise SystemExit(f"bench: ran out of text at {sizes[name]} tokens")
                    run(tmg, seed_envs[name], cwd, ["-r", "In one line, what is this about?"], chunks[used])
                    used += 1
            # One untimed prompt each, so both start timing with their own session's prefix cached.
            for name in cases:
                run(tmg, envs[name], cwd, ["-r", prompt(0, args.fresh)])
            seeded = {name: len(proxies[name].requests) for name in cases}
            samples: dict[str, list[float]] = {name: [] for name in cases}
            for i in range(1, args.rounds + 1):
                for name in cases:
                    samples[name].append(run(tmg, envs[name], cwd, ["-r", prompt(i, args.fresh)]))
        finally:
            for name in cases:
                if name == "memory on":
                    subprocess.run([tmg, "memory", "stop"], capture_output=True, env=envs[name])
        timed_requests = {name: proxies[name].requests[seeded[name]:] for name in cases}
        final = {name: session_tokens(servers[name].url, proxies[name].requests[-1]) for name in cases}
        instructions = instructions_part(timed_requests["memory on"][-1])
        notes = [notes_part(q) for q in timed_requests["memory on"] if notes_part(q)]
        block_tokens = (count_tokens(servers["memory on"].url, instructions) if instructions else 0,
                        count_tokens(servers["memory on"].url, notes[-1]) if notes else 0)
        if args.shared_server:
            both = evaluated(logdir / "memory off.log", 2 * args.rounds)
            cache = {"memory off": both[0::2], "memory on": both[1::2]}
        else:
            cache = {name: evaluated(logdir / f"{name}.log", args.rounds) for name in cases}
        store = FakePlur(Path(envs["memory on"]["TMG_HOME"])).engrams()
        report(args, samples, sizes, timed_requests, final, cache)
        print(f"model tokens of the instructions in the system message: {block_tokens[0]}; of the last notes sent "
              f"beside a user turn: {block_tokens[1]}; memory-on store after the run: "
              f"{len(store)} engrams, {sum(bool(e.get('pinned')) for e in store)} pinned"
              + "".join(f"\n  pinned: {e['statement'][:100]!r}{'...' if len(e['statement']) > 100 else ''} "
                        f"({len(e['statement'])} characters)" for e in store if e.get("pinned")))
        print(f"server logs: {logdir}")


def report(args: argparse.Namespace, samples: dict[str, list[float]], seeded: dict[str, int],
           timed_requests: dict[str, list[dict]], final: dict[str, int],
           cache: dict[str, list[tuple[int, int]]]) -> None:
    med = statistics.median
    off, on = med(samples["memory off"]), med(samples["memory on"])
    where = "one server for both sessions" if args.shared_server else "one server per session"
    print(f"### P10: a real model server, memory on vs off (target <= 1.2x)\n\n"
          f"llama-cpp-python server, SmolLM2-135M-Instruct, n_ctx {args.n_ctx}, {where}; max_tokens "
          f"{args.max_tokens}; memory on: LEARN {args.learn or 'shipped'}; {os.cpu_count()} CPUs; median of {args.rounds} one-shots per case, alternating.\n")
    print("| case | session tokens, block aside (seeded -> last request) | server: tokens reused / evaluated per prompt (median) "
          "| median s per prompt | runs (s) | ratio to memory off |")
    print("|---|---|---|---|---|---|")
    for name, values in samples.items():
        runs = ", ".join(f"{v:.2f}" for v in values)
        reuse = (f"{med(a for a, _ in cache[name]):.0f} / {med(b for _, b in cache[name]):.0f}"
                 if cache[name] else "n/a")
        print(f"| {name} | {seeded[name]} -> {final[name]} | {reuse} | {med(values):.2f} | {runs} "
              f"| {med(values) / off:.2f}x |")
    print()
    on_requests = timed_requests["memory on"]
    systems = {json.dumps(q["messages"][0]) for q in on_requests}
    with_instructions = sum(bool(instructions_part(q)) for q in on_requests)
    with_notes = [bool(notes_part(q)) for q in on_requests]
    in_last_only = all(NOTES_HEADING not in json.dumps(q["messages"][:-2]) for q in on_requests)
    sizes = [len(notes_part(q)) for q in on_requests if notes_part(q)]
    off_blocks = sum(bool(memory_blocks(q)) for q in timed_requests["memory off"])
    print(f"memory-on requests: {with_instructions}/{len(on_requests)} carry the instructions, in "
          f"{len(systems)} distinct system message(s); {sum(with_notes)}/{len(on_requests)} carry notes "
          f"({'only right before the latest user turn' if in_last_only else 'EARLIER in the request too'}; "
          f"{min(sizes, default=0)}-{max(sizes, default=0)} characters); memory-off requests with memory: {off_blocks}")
    for name, pairs in cache.items():
        if pairs:
            reused, fresh = sum(a for a, _ in pairs), sum(b for _, b in pairs)
            print(f"{name}: the server reused {reused / (reused + fresh):.1%} of the prompt tokens from its cache "
                  f"({reused} reused, {fresh} evaluated over {len(pairs)} prompts)")
    extra = {name: len(q) - args.rounds for name, q in timed_requests.items() if len(q) != args.rounds}
    if extra:
        print(f"WARNING: timed prompts made more requests than prompts (a context-overflow retry?): {extra}")
    print(f"ratio memory on / off: {on / off:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
