"""P3 and P4 of quality.md: what memory costs a one-shot, side by side with memory off.

P3: `echo q | tmg` against the local mock API with memory on (fakeplur, and the real PLUR with
    40 engrams) against the same one-shot with memory off (target <= 1.10x). The real PLUR is
    reached three ways: through the warm memory broker (the usual case), as a cold first run
    (the broker stopped before each run, so the run starts it), and spawned directly by the run
    (TMG_MEMORY_BROKER=0: how every run reached it before the broker).
    `--litellm` adds the same pair on the litellm backend, whose import the memory server's
    start overlaps. `--sync` adds the warm case with MEMORY.SYNC on (a store of its own synced
    with a local bare repository at every session's end): the sync runs in the broker after
    the run, so it must cost a one-shot nothing (docs/memory-sync.md).
P4: exit after the last answer: from the answer's last byte on stdout to the process's exit,
    memory on with LEARN batch (so the flush of one engram is included; target <= 0.3 s),
    next to the same with memory off.

Every case runs once per round, interleaved, from bytecode as an installed tmg does; figures are
medians. The real PLUR cases need
Node.js and the pinned install (`./scripts/install-plur`); without them they are left out.

Run: ./.venv/bin/python bench/memory_oneshot.py [--rounds N] [--litellm] [--sync]
(in a git worktree whose .venv is shared, prefix PYTHONPATH=$PWD: `.venv/bin/tmg` imports the
installed checkout otherwise, and the figures would be another tree's)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import ROOT, report, scratch_env, timed, tmg_bin, with_bytecode

from e2e.mock_llm import MockLLM, Text

ANSWER = "four"
SEED_COUNT = 40


def provider(url: str, backend: str = "auto") -> str:
    return f"PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n    URL: {url}\n    BACKEND: {backend}\n"


def fakeplur_entry(home: Path) -> str:
    env = {"PYTHONPATH": str(ROOT), "HOME": str(home), "FAKE_PLUR_STORE": str(home / "store.json")}
    lines = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in env.items())
    return f"MCP_SERVERS:\n  plur:\n    COMMAND: {json.dumps(sys.executable)}\n    ARGS: [-m, fakeplur]\n    ENV:\n{lines}"


def real_plur_entry(home: Path, entry: Path) -> str:
    neutral = home / "neutral"
    neutral.mkdir(parents=True, exist_ok=True)
    return ("MCP_SERVERS:\n  plur:\n    COMMAND: node\n"
            f"    ARGS: [{json.dumps(str(entry))}]\n"
            f"    ENV: {{HOME: {json.dumps(str(home))}, PLUR_DISABLE_EMBEDDINGS: '1'}}\n"
            f"    DIR: {json.dumps(str(neutral))}\n")


def seed_real_plur(home: Path, entry: Path) -> None:
    """40 engrams in the store, as a user's memory might hold (learned through the server)."""
    from tests.support.plur_server import running
    from tmg.mcp import ServerSpec, child_environment

    home.mkdir(parents=True, exist_ok=True)
    env = child_environment({"HOME": str(home), "PLUR_DISABLE_EMBEDDINGS": "1", "PLUR_TOOL_PROFILE": "full"})
    spec = ServerSpec(name="seed", command="node", args=(str(entry),), env=env, cwd=str(home))
    topics = ["deploys", "YAML", "git", "tests", "logging", "backups", "reviews", "docs"]
    with running(spec) as server:
        engrams = [{"statement": f"Note {i} about {topics[i % len(topics)]}: keep change {i} small and reviewed"}
                   for i in range(SEED_COUNT)]
        outcome = server.call("plur_learn_batch", {"engrams": engrams, "max_llm_calls": 0}, timeout=60)
        if outcome.is_error:
            raise SystemExit(f"bench: seeding PLUR failed: {outcome.text}")


def synced_plur(home: Path, entry: Path, url: str) -> str:
    """A config whose store (40 engrams, its own) syncs with a local bare repository."""
    seed_real_plur(home, entry)
    (home / ".gitconfig").write_text("[user]\n\tname = bench\n\temail = bench@example.com\n")
    remote = home / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    return (provider(url) + real_plur_entry(home, entry)
            + f"MEMORY:\n  LEARN: batch\n  SYNC:\n    REMOTE: {json.dumps(str(remote))}\n")


def installed_plur() -> Path | None:
    try:
        from tests.support.plur_server import PlurUnavailable, real_plur_entry as install
    except ImportError:
        return None
    try:
        return install()
    except PlurUnavailable:
        return None


def exit_after_answer(cmd: list[str], env: dict[str, str]) -> float:
    """Seconds from the answer's last byte on stdout to the process's exit."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"2+2?\n")
    proc.stdin.close()
    seen = b""
    while not seen.rstrip().endswith(ANSWER.encode()):
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            raise SystemExit(f"bench: no answer from {cmd}: {proc.stderr.read().decode()[-400:]}")
        seen += chunk
    answered = time.perf_counter()
    code = proc.wait()
    exited = time.perf_counter()
    if code != 0:
        raise SystemExit(f"bench: {cmd} failed ({code}): {proc.stderr.read().decode()[-400:]}")
    return exited - answered


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=21)  # fewer rounds: medians that move by a few %
    parser.add_argument("--litellm", action="store_true", help="add the pair on the litellm backend")
    parser.add_argument("--sync", action="store_true", help="add the warm case with MEMORY.SYNC at session end")
    args = parser.parse_args()
    tmg = tmg_bin()
    entry = installed_plur()
    with MockLLM(default=Text(ANSWER, chunks=2)) as llm:
        env, home = scratch_env()
        env = with_bytecode(env, home)  # as an installed tmg runs (the warm-up run writes it)
        root = Path(home)
        configs: dict[str, str] = {
            "memory off": provider(llm.url) + "MEMORY:\n  ENABLED: false\n",
            "memory on, fakeplur": provider(llm.url) + fakeplur_entry(root / "fake"),
        }
        extra_env: dict[str, dict[str, str]] = {}
        if entry is not None:
            seed_real_plur(root / "real", entry)
            real = provider(llm.url) + real_plur_entry(root / "real", entry)
            configs["memory on, real PLUR (40 engrams), warm broker"] = real
            configs["memory on, real PLUR, cold first run (starts the broker)"] = real
            configs["memory on, real PLUR, direct spawn (no broker, as before)"] = real
            extra_env["memory on, real PLUR, cold first run (starts the broker)"] = {"TMG_HOME": str(root / "cold")}
            extra_env["memory on, real PLUR, direct spawn (no broker, as before)"] = {"TMG_MEMORY_BROKER": "0"}
        synced = "memory on, real PLUR, warm broker, MEMORY.SYNC at each session's end"
        if args.sync and entry is not None:
            configs[synced] = synced_plur(root / "synced", entry, llm.url)
        if args.litellm:
            configs["litellm backend, memory off"] = provider(llm.url, "litellm") + "MEMORY:\n  ENABLED: false\n"
            if entry is not None:
                configs["litellm backend, memory on, real PLUR"] = (provider(llm.url, "litellm")
                                                                    + real_plur_entry(root / "real", entry))
        envs = {}
        for name, text in configs.items():
            path = root / f"{len(envs)}.yaml"
            path.write_text(text + ("MEMORY:\n  LEARN: batch\n" if "MEMORY" not in text else ""))
            envs[name] = dict(env, TMG_CONFIG=str(path), LITELLM_LOCAL_MODEL_COST_MAP="True", **extra_env.get(name, {}))
            if "memory on" in name:
                # scratch_env turns memory off by environment, which wins over the file: without
                # this, "memory on" would start PLUR as an MCP tool server and never recall.
                del envs[name]["TMG_MEMORY_ENABLED"]
        cmd = [tmg, "--new", "-r"]
        if synced in envs:  # set the sync up once, as a user does (`tmg memory sync`)
            subprocess.run([tmg, "memory", "sync"], capture_output=True, text=True, env=envs[synced], check=True)
        try:
            for name in envs:  # warm the disk cache and the stores once (and start the broker)
                subprocess.run(cmd, input="2+2?\n", capture_output=True, text=True, env=envs[name], check=True)

            cases = {f"tmg one-shot ({n})": {"cmd": cmd, "stdin": "2+2?\n", "env": e} for n, e in envs.items()}
            for name, case in cases.items():
                if "cold first run" in name:
                    case["before"] = lambda e=case["env"]: stop_broker(tmg, e)
            p3, cpu = interleaved_with_cpu(cases, args.rounds)
            print(report("P3: one-shot wall time, memory on vs off (target <= 1.10x)", p3,
                         "tmg one-shot (memory off)"))
            print(report("P3, CPU: user+sys of the run and the children it waits for (a broker is not one)",
                         cpu, "tmg one-shot (memory off)", ms=True))
            measure_p4(cmd, envs, args.rounds)
        finally:
            for e in envs.values():
                stop_broker(tmg, e)


def interleaved_with_cpu(cases: dict[str, dict], rounds: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """`interleaved`, also taking each run's CPU (on a loaded machine wall time is mostly queueing)."""
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, case in cases.items():
            args = dict(case)
            prepare = args.pop("before", None)
            if prepare is not None:
                prepare()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall[name].append(timed(**args))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall, cpu


def stop_broker(tmg: str, env: dict[str, str]) -> None:
    subprocess.run([tmg, "memory", "stop"], capture_output=True, env=env, check=True)


def measure_p4(cmd: list[str], envs: dict[str, dict[str, str]], rounds: int) -> None:
    p4: dict[str, list[float]] = {name: [] for name in envs if "litellm" not in name and "cold" not in name}
    for _ in range(rounds):
        for name in p4:
            p4[name].append(exit_after_answer(cmd, envs[name]))
    lines = ["### P4: exit after the last answer, LEARN batch (target <= 0.3 s)", "",
             "| case | median (ms) | max (ms) |", "|---|---|---|"]
    for name, values in p4.items():
        lines.append(f"| {name} | {statistics.median(values) * 1000:.0f} | {max(values) * 1000:.0f} |")
    print("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
