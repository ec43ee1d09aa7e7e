"""P11 of quality.md: memory at 0, 1 and 5 years of use (real PLUR 0.20.0, through the warm broker).

A tool kept open all day must not slow down because it was useful for a year. This bench builds
PLUR stores the size of 0, 1 and 5 years of the shipped tier and, per store, measures what a user
runs: the one-shot `tmg "..."` with the shipped config (lean tool profile, keyword search, LEARN
full) through the warm broker, memory on vs off, side by side.

What a year holds is derived from what the tier writes per prompt, at USE (below):
- "main" (the shipped tier before issue 22): an episode per answer (`plur_capture`, ~1.2 KB of
  answer text each), and the issue's 800 engrams a year (it learned them through
  `plur_learn_batch`: the engrams any writer of a shared `~/.plur` may add; on main the tier
  pinned its own learns, which PLUR 0.20.0 refuses past its pinned quota);
- "new" (issue 21's first shape, kept for comparison): the user's pinned instructions (a few a
  month, bounded by PLUR's pinned quota) and one digest episode per session (up to 2,000 bytes);
- "shipped" (the tier on main since issue 21's teaching round, `tmg.memory.learning`): only what
  the user taught, as engrams (standing instructions pinned, up to PLUR's pinned quota; the rest,
  corrections and facts, unpinned) at the rate the issue-11 corpus measured (0.39 a session, a
  corpus dense with teaching: an upper figure), and no episode at all (no answer, no digest).
Every store also holds one seeded standing instruction (pinned): "recall present" means its words
reached the mock's request on an unrelated prompt.

Per store: wall and CPU of the one-shot with memory on vs off (rounds of the two back to back, the
order turned round every other round; the ratio is the median of the rounds' ratios, with its 95%
interval, since a shared machine's pace moves more between rounds than within one; "on" is the
broker as shipped), and "plain" (the same broker with its PLUR read process off,
`TMG_PLUR_READER: '0'`, on its own copy of the store; measured after the on/off rounds, not
between them: its reads outlast its one-shots at 5 years), three one-shots each after a pause longer than the
broker's idle period (when it replays the reads' reinforcement on PLUR's writer), the
exit after the answer (P4: the answer's last byte to the process's exit), PLUR's own time per call
(inject, recall, capture, learn, the pinned list; one direct client on the same store) and
whether every memory-on request carried the seeded instruction. `--busy` adds the busy-machine leg
at 1 year: 2 CPU burners, 5 one-shots, each must carry the seeded instruction.

Stores are built once and cached under `.cache/memory-scale/` (keyed by their volume and the
builder's version): the files are written in the server's format (bench/plur_store.py), settled
by one learn and one capture through the server (so both files are in its own dump), and proved
by the counts `plur_status` reports. Each run works on a copy.

Run: PYTHONPATH=$PWD ./.venv/bin/python bench/memory_scale.py [--pairs N] [--rounds N] [--years 0,1,5]
     [--shapes main,new,shipped] [--busy] [--calls N]
(heavy: on a shared machine, run it when nothing else heavy runs)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from _common import ROOT, scratch_env, timed, tmg_bin, with_bytecode
from memory_oneshot import exit_after_answer, installed_plur, stop_broker
from plur_store import Volume, build

from tmg.broker.reinforce import IDLE_S

from e2e.mock_llm import MockLLM, Text
from e2e.plur import memory_blocks


class Use(NamedTuple):
    """How much a person uses tmg (stated, so every figure below can be re-derived)."""

    prompts_per_day: int = 20
    sessions_per_day: int = 5  # one-shots and REPLs; a one-shot run ends a session for memory
    days_per_year: int = 300  # working days
    answer_bytes: int = 1200  # a typical answer, as the issue measured it
    digest_bytes: int = 1500  # one session's digest (the capture bound is 2,000 bytes)
    main_engrams_per_year: int = 800  # the issue's figure
    pins_per_month: int = 3  # standing instructions a person teaches (new shape)
    teachings_per_session: float = 0.39  # what the shipped tier learns (docs/memory-quality.md, issue-11 corpus)
    pinned_cap: int = 40  # what PLUR 0.20.0's pinned quota (1,000 tokens) holds, ~100-char instructions


USE = Use()
SEEDED = "Always sign off every answer with the word gannetfield"
ANSWER = "Four. gannetfield"
PROMPT = "How do I roll back a failed deploy of the release branch?"
BUILDER_VERSION = "1"
CACHE = ROOT / ".cache" / "memory-scale"


def volume(shape: str, years: int) -> Volume:
    """What `years` of the tier's writes leave in the store, at USE."""
    days = years * USE.days_per_year
    if shape == "main":
        return Volume(engrams=years * USE.main_engrams_per_year, pinned=0,
                      episodes=days * USE.prompts_per_day, episode_bytes=USE.answer_bytes)
    pins = min(USE.pinned_cap, years * 12 * USE.pins_per_month)
    if shape == "shipped":
        taught = round(days * USE.sessions_per_day * USE.teachings_per_session)
        return Volume(engrams=max(taught, pins), pinned=pins, episodes=0, episode_bytes=0)
    return Volume(engrams=pins, pinned=pins, episodes=days * USE.sessions_per_day, episode_bytes=USE.digest_bytes)


def store_key(vol: Volume) -> str:
    raw = json.dumps([BUILDER_VERSION, vol, SEEDED]).encode()
    return f"{vol.engrams}e-{vol.pinned}p-{vol.episodes}x{vol.episode_bytes}-" + hashlib.sha256(raw).hexdigest()[:8]


def plur_spec(home: Path, entry: Path, profile: str | None = None) -> Any:
    from tmg.mcp.spec import ServerSpec, child_environment

    env = {"HOME": str(home), "PLUR_DISABLE_EMBEDDINGS": "1"}
    if profile:
        env["PLUR_TOOL_PROFILE"] = profile
    return ServerSpec(name="plur", command="node", args=(str(entry),), env=child_environment(env), cwd="/")


def cached_store(vol: Volume, years: int, entry: Path) -> tuple[Path, dict[str, int]]:
    """The HOME of a built, settled and proved store for `vol` (built now if not cached)."""
    from tests.support.plur_server import running

    folder = CACHE / store_key(vol)
    proof = folder / "proof.json"
    if proof.exists():
        return folder / "home", json.loads(proof.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    home = folder / "home"
    started = time.perf_counter()
    build(home / ".plur", vol, days=years * 365, extra_pinned=(SEEDED,))
    written = time.perf_counter() - started
    with running(plur_spec(home, entry, "full")) as server:
        # The server rewrites both files in its own dump: what the bench then measures is its format.
        for tool, args in (("plur_learn", {"statement": "Settling note: the bench store was built in one go"}),
                           ("plur_capture", {"summary": "The bench store was settled", "agent": "bench"})):
            outcome = server.call(tool, args, timeout=300)
            if outcome.is_error:
                raise SystemExit(f"bench: settling the store failed ({tool}): {outcome.text}")
        status = server.call("plur_status", {}, timeout=300).data
        pins = server.call("plur_pin", {"list": True}, timeout=300).data
    counts = {"engrams": status["engram_count"], "episodes": status["episode_count"], "pinned": pins["count"],
              "built_s": round(written, 1), "settled_s": round(time.perf_counter() - started - written, 1)}
    expected = {"engrams": vol.engrams + 2, "episodes": vol.episodes + 1, "pinned": vol.pinned + 1}
    if {k: counts[k] for k in expected} != expected:
        raise SystemExit(f"bench: the server counts {counts}, the builder wrote {expected}: it did not read the store")
    if SEEDED not in [p["statement"] for p in pins["pinned"]]:
        raise SystemExit("bench: the seeded instruction is not in the server's pinned set")
    sizes = {name: (home / ".plur" / name).stat().st_size for name in ("engrams.yaml", "episodes.yaml")}
    counts |= {"engrams_yaml_bytes": sizes["engrams.yaml"], "episodes_yaml_bytes": sizes["episodes.yaml"]}
    proof.write_text(json.dumps(counts))
    return home, counts


def config_text(llm_url: str, home: Path | None, entry: Path, reader: bool = True) -> str:
    """The shipped config's memory (`tmg.config.shipped`: lean profile, keyword search, DIR /, LEARN
    full) with the store's HOME; or memory off when `home` is None. `reader=False`: the broker runs
    PLUR's reads as PLUR does them, writes and all (tmg/broker/reinforce.py's off switch)."""
    text = f"PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n    URL: {llm_url}\n"
    if home is None:
        return text + "MEMORY:\n  ENABLED: false\n"
    switch = "" if reader else ", TMG_PLUR_READER: '0'"
    return (text + f"MCP_SERVERS:\n  plur:\n    COMMAND: {json.dumps(shutil.which('node') or 'node')}\n"
            f"    ARGS: [{json.dumps(str(entry))}]\n"
            f"    ENV: {{HOME: {json.dumps(str(home))}, PLUR_DISABLE_EMBEDDINGS: '1'{switch}}}\n    DIR: /\n"
            "MEMORY:\n  ENABLED: true\n  LEARN: full\n")


class Case(NamedTuple):
    name: str
    env: dict[str, str]


def one_shots(cases: list[Case], rounds: int, cmd: list[str]) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each case once a round; the order turns round every other round, so a machine that speeds
    up or slows down over the run weighs on both cases alike."""
    wall: dict[str, list[float]] = {c.name: [] for c in cases}
    cpu: dict[str, list[float]] = {c.name: [] for c in cases}
    for n in range(rounds):
        for case in (cases if n % 2 == 0 else cases[::-1]):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall[case.name].append(timed(cmd, stdin="", env=case.env))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[case.name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall, cpu


def paired_ratio(on: list[float], off: list[float]) -> tuple[float, float, float]:
    """The median of the rounds' on/off ratios and its 95% confidence interval (distribution-free:
    the order statistics a binomial(n, 1/2) puts 2.5% outside on each side). Each round's pair ran
    back to back, so a noisy machine moves both of a pair and little of their ratio."""
    ratios = sorted(a / b for a, b in zip(on, off))
    n = len(ratios)
    k = 0  # the largest k with P(Binomial(n, 1/2) < k) <= 0.025
    while k < n // 2 and sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n <= 0.025:
        k += 1
    return statistics.median(ratios), ratios[max(k - 1, 0)], ratios[min(n - k, n - 1)]


def per_call(home: Path, entry: Path, calls: int) -> dict[str, float]:
    """PLUR's own median ms per call on this store (one direct client, as the broker's child is)."""
    from tests.support.plur_server import running

    times: dict[str, list[float]] = {}
    with running(plur_spec(home, entry, "full")) as server:
        server.call("plur_inject_hybrid", {"task": "warm up", "budget": 2000}, timeout=300)
        plan = [("inject", "plur_inject_hybrid", lambda i: {"task": f"{PROMPT} ({i})", "budget": 2000}),
                ("recall", "plur_recall", lambda i: {"query": f"{PROMPT} ({i})", "limit": 20}),
                ("pinned list", "plur_pin", lambda i: {"list": True}),
                ("capture", "plur_capture", lambda i: {"summary": f"A bench answer {i}. " * 60, "agent": "bench"}),
                ("learn", "plur_learn", lambda i: {"statement": f"Bench note {i}: the kestrel build runs nightly"})]
        for i in range(calls):
            for label, tool, args in plan:
                start = time.perf_counter()
                outcome = server.call(tool, args(i), timeout=300)
                times.setdefault(label, []).append(time.perf_counter() - start)
                if outcome.is_error:
                    raise SystemExit(f"bench: {tool} failed on the store: {outcome.text[:300]}")
    # The same reads on the broker's read process (PLUR through tmg/broker/plur_reader.mjs).
    from tmg.broker.reinforce import SHIM

    reader = replace(plur_spec(home, entry, "full"), args=(str(SHIM), str(entry)))
    with running(reader) as server:
        server.call("plur_inject_hybrid", {"task": "warm up", "budget": 2000}, timeout=300)
        for i in range(calls):
            for label, tool, args in plan[:2]:
                start = time.perf_counter()
                outcome = server.call(tool, args(i), timeout=300)
                times.setdefault(f"{label} (read process)", []).append(time.perf_counter() - start)
                if outcome.is_error:
                    raise SystemExit(f"bench: {tool} failed on the read process: {outcome.text[:300]}")
    return {label: statistics.median(values) * 1000 for label, values in times.items()}


def carried(llm: MockLLM, since: int) -> tuple[int, int]:
    requests = llm.requests[since:]
    return sum(any(SEEDED in block for block in memory_blocks(r)) for r in requests), len(requests)


def measure_store(label: str, home_src: Path, entry: Path, llm: MockLLM, tmg: str, args: argparse.Namespace,
                  busy: bool) -> dict[str, Any]:
    env, scratch = scratch_env(LITELLM_LOCAL_MODEL_COST_MAP="True")
    env = with_bytecode(env, scratch)
    root = Path(scratch)
    homes = {"on": root / "store", "plain": root / "store-plain"}  # a copy each: neither sees the other's writes
    for home in homes.values():
        shutil.copytree(home_src, home, symlinks=True)
    configs = {"off": config_text(llm.url, None, entry), "on": config_text(llm.url, homes["on"], entry),
               "plain": config_text(llm.url, homes["plain"], entry, reader=False)}
    cases = []
    for name, text in configs.items():
        path = root / f"{name}.yaml"
        path.write_text(text)
        case_env = dict(env, TMG_CONFIG=str(path), TMG_HOME=str(root / f"tmg-{name}"))
        if name != "off":
            del case_env["TMG_MEMORY_ENABLED"]  # scratch_env's memory-off switch wins over the file
        cases.append(Case(name, case_env))
    cmd = [tmg, "-r", PROMPT]
    result: dict[str, Any] = {"store": label}
    try:
        for case in cases:  # untimed: bytecode, disk cache, and the broker (with PLUR) started
            timed(cmd, stdin="", env=case.env)
        since = len(llm.requests)
        # Off and on interleaved; plain after them, apart: at 5 years its reads outlast its one-shot
        # (PLUR goes on with a call the client gave up on at its deadline) and slowed the "off"
        # run that came next, which made the on/off ratio look better than it was.
        wall, cpu = one_shots(cases[:2], args.pairs, cmd)
        plain_wall, plain_cpu = one_shots(cases[2:], args.rounds, cmd)
        wall |= plain_wall
        cpu |= plain_cpu
        on_carried, _ = carried(llm, since)
        result |= {"ratio": paired_ratio(wall["on"], wall["off"]), "cpu_ratio": paired_ratio(cpu["on"], cpu["off"])}
        result |= {"wall_off": statistics.median(wall["off"]), "wall_on": statistics.median(wall["on"]),
                   "cpu_off": statistics.median(cpu["off"]), "cpu_on": statistics.median(cpu["on"]),
                   "wall_plain": statistics.median(wall["plain"]), "cpu_plain": statistics.median(cpu["plain"]),
                   "recall": (on_carried, args.pairs + args.rounds)}  # the "on" and "plain" one-shots
        # A person pauses between prompts: the broker then replays the reads' reinforcement on PLUR's
        # writer and warms its read process again; the prompt after such a pause must not pay for it.
        idle: dict[str, list[float]] = {"off": [], "on": []}
        for n in range(3):
            time.sleep(IDLE_S + 2)
            for case in cases[:2]:
                idle[case.name].append(timed([tmg, "-r", f"{PROMPT} (after a pause {n})"], stdin="", env=case.env))
        result |= {"after_idle": statistics.median(idle["on"]), "after_idle_off": statistics.median(idle["off"])}
        exits = [exit_after_answer(cmd, cases[1].env, answer=ANSWER, stdin=b"") for _ in range(args.rounds)]
        result |= {"p4_median": statistics.median(exits), "p4_max": max(exits)}
        if busy:
            result["busy"] = busy_leg(cases[1], llm, cmd)
    finally:
        for case in cases[1:]:
            stop_broker(tmg, case.env)
        log = Path(cases[1].env["TMG_HOME"]) / "broker.log"
        if log.exists():  # what the broker did while idle (replays, warm-ups), for the record
            lines = [line for line in log.read_text().splitlines() if "replayed" in line or "warmed" in line]
            print(f"broker of {label}: {len(lines)} replay/warm lines; last: {lines[-4:]}", file=sys.stderr)
    result["calls"] = per_call(homes["on"], entry, args.calls)
    shutil.rmtree(root, ignore_errors=True)
    return result


def busy_leg(case: Case, llm: MockLLM, cmd: list[str]) -> tuple[int, int]:
    """5 one-shots with 2 CPU burners running: how many carried the seeded instruction."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    since = len(llm.requests)
    try:
        for _ in range(5):
            timed(cmd, stdin="", env=case.env)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    return carried(llm, since)


def report(rows: list[dict[str, Any]], stores: dict[str, dict[str, int]], args: argparse.Namespace) -> None:
    print(f"### P11: memory at scale (real PLUR 0.20.0, shipped config, warm broker; {args.pairs} rounds of memory "
          f"off and on back to back, the ratio the median of the rounds' ratios with its 95% interval; plain "
          f"and exit: {args.rounds} one-shots; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})\n")
    print(f"Use: {USE.prompts_per_day} prompts a day in {USE.sessions_per_day} sessions, {USE.days_per_year} days a "
          f"year; main: an episode per answer (~{USE.answer_bytes} B) and {USE.main_engrams_per_year} engrams a year; "
          f"new: {USE.pins_per_month} pinned instructions a month (at most {USE.pinned_cap}) and a digest per "
          f"session (~{USE.digest_bytes} B); shipped: {USE.teachings_per_session} teachings a session (pinned "
          f"as new), no episodes.\n")
    print("\"on\" is the broker as shipped (PLUR's reads on its read process, reinforcement replayed when "
          "idle); \"plain\" is the same broker with `TMG_PLUR_READER: '0'` (every read as PLUR does it).\n")
    print("| store | engrams (pinned) / episodes | engrams.yaml / episodes.yaml | wall off / on (s) | ratio "
          "| plain: wall (s), ratio | after a pause: wall off / on (s), ratio | CPU off / on (ms) | ratio "
          "| exit after answer, median / max (ms) | recall present |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        s = stores[row["store"]]
        busy = f"; busy: {row['busy'][0]}/{row['busy'][1]}" if "busy" in row else ""
        print(f"| {row['store']} | {s['engrams']} ({s['pinned']}) / {s['episodes']} "
              f"| {s['engrams_yaml_bytes'] / 1e6:.2f} / {s['episodes_yaml_bytes'] / 1e6:.2f} MB "
              f"| {row['wall_off']:.3f} / {row['wall_on']:.3f} | {_ratio(row['ratio'])} "
              f"| {row['wall_plain']:.3f}, {row['wall_plain'] / row['wall_off']:.2f}x "
              f"| {row['after_idle_off']:.3f} / {row['after_idle']:.3f}, {row['after_idle'] / row['after_idle_off']:.2f}x "
              f"| {row['cpu_off'] * 1000:.0f} / {row['cpu_on'] * 1000:.0f} | {_ratio(row['cpu_ratio'])} "
              f"| {row['p4_median'] * 1000:.0f} / {row['p4_max'] * 1000:.0f} "
              f"| {row['recall'][0]}/{row['recall'][1]}{busy} |")
    labels = list(rows[0]["calls"]) if rows else []
    print("\nPLUR's own time per call on each store (median ms, one direct client):\n")
    print("| store | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for row in rows:
        print(f"| {row['store']} | " + " | ".join(f"{row['calls'][k]:.0f}" for k in labels) + " |")
    print()


def _ratio(ratio: tuple[float, float, float]) -> str:
    median, low, high = ratio
    return f"{median:.2f}x ({low:.2f}-{high:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15, help="one-shots of the plain and exit legs")
    parser.add_argument("--pairs", type=int, default=31, help="rounds of memory off and on back to back")
    parser.add_argument("--years", default="0,1,5")
    parser.add_argument("--shapes", default="shipped,new,main")
    parser.add_argument("--calls", type=int, default=5, help="calls per tool for PLUR's own times")
    parser.add_argument("--busy", action="store_true", help="add the busy-machine leg at 1 year")
    args = parser.parse_args()
    entry = installed_plur()
    if entry is None:
        raise SystemExit("bench: needs Node.js and the pinned PLUR (./scripts/install-plur)")
    tmg = tmg_bin()
    years = [int(y) for y in args.years.split(",")]
    shapes = args.shapes.split(",")
    stores: dict[str, dict[str, int]] = {}
    homes: dict[str, Path] = {}
    for shape in shapes:
        for year in years:
            if year == 0 and shape != shapes[0]:
                continue  # an empty store is the same for every shape
            label = "empty" if year == 0 else f"{shape}, {year} year{'s' if year > 1 else ''}"
            homes[label], stores[label] = cached_store(volume(shape, year), year, entry)
            print(f"store {label}: {stores[label]}", file=sys.stderr)
    rows = []
    with MockLLM(default=Text(ANSWER, chunks=2)) as llm:
        for label, home in homes.items():
            rows.append(measure_store(label, home, entry, llm, tmg, args, busy=args.busy and "1 year" in label))
            print(f"measured {label}: {rows[-1]}", file=sys.stderr)
    report(rows, stores, args)


if __name__ == "__main__":
    main()
