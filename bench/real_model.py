"""P2 against a real model server: time to first token and tokens/s, for the server alone and
through a `tmg` one-shot.

Starts llama-cpp-python's server with SmolLM2-135M-Instruct (e2e/realmodel.py; installed by
scripts/bootstrap --test) on a free port. The server streams one chunk per token, so tokens/s is
content chunks over the time from the first to the last. Through tmg, the first byte on stdout
marks the first token (memory off, piped output).

Run: ./.venv/bin/python bench/real_model.py [--rounds N] [--max-tokens N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from _common import scratch_env, tmg_bin

from e2e import realmodel

PROMPT = "Write a short paragraph about the sea."


def server_stream(url: str, max_tokens: int) -> tuple[float, float, int]:
    """(seconds to the first content chunk, tokens/s after it, tokens) of one streamed answer."""
    body = {"model": "smollm2", "messages": [{"role": "user", "content": PROMPT}], "stream": True,
            "max_tokens": max_tokens}
    start = time.perf_counter()
    first = last = 0.0
    tokens = 0
    with httpx.stream("POST", url + "/chat/completions", json=body, timeout=300) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content"):
                tokens += 1
                last = time.perf_counter()
                first = first or last
    rate = (tokens - 1) / (last - first) if tokens > 1 and last > first else 0.0
    return first - start, rate, tokens


def tmg_first_byte(tmg: str, env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(seconds to the first answer byte on stdout, wall seconds) of one `tmg` one-shot."""
    start = time.perf_counter()
    proc = subprocess.Popen([tmg, "--new", PROMPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    assert proc.stdout is not None
    proc.stdout.read(1)
    first = time.perf_counter() - start
    proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"bench: tmg failed ({proc.returncode})")
    return first, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    problem = realmodel.missing()
    if problem:
        raise SystemExit(f"bench: {problem}")
    tmg = tmg_bin()
    with realmodel.LlamaServer() as server:
        server_stream(server.url, 8)  # warm: the model's first evaluation is slower
        env, home = scratch_env()
        config = Path(home) / "tmg.yaml"
        config.write_text(f"PROVIDERS:\n  local:\n    MODEL: openai/smollm2\n    URL: {server.url}\n"
                          f"    API_KEY: none\n    MAX_TOKENS: {args.max_tokens}\n")
        env.update(TMG_CONFIG=str(config), TMG_MEMORY_ENABLED="false")
        cwd = tempfile.mkdtemp(prefix="tmg-bench-work-")
        direct, through = [], []
        for _ in range(args.rounds):
            direct.append(server_stream(server.url, args.max_tokens))
            through.append(tmg_first_byte(tmg, env, cwd))
    med = statistics.median
    print("### P2 against a real server (llama-cpp-python 0.3.36, SmolLM2-135M-Instruct Q4_1, "
          f"{os.cpu_count()} CPUs, max_tokens {args.max_tokens}, median of {args.rounds})\n")
    print("| measure | median |\n|---|---|")
    print(f"| server: time to first token | {med(d[0] for d in direct) * 1000:.0f} ms |")
    print(f"| server: tokens/s after the first | {med(d[1] for d in direct):.0f} |")
    print(f"| tmg one-shot: time to first answer byte | {med(t[0] for t in through) * 1000:.0f} ms |")
    print(f"| tmg one-shot: wall | {med(t[1] for t in through):.2f} s |")
    print(f"| tmg overhead on the first token | {(med(t[0] for t in through) - med(d[0] for d in direct)) * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
