"""REPL latency in a real terminal (tmux), side by side with floors, against the local mock API.

1. launch -> usable prompt: from starting the command in a fresh tmux to its prompt on screen.
   Floor: a bare prompt-toolkit prompt (``python -c "...PromptSession().prompt('> ')"``).
2. Enter -> first rendered character, after warm-up (the gateway imported, one answer done):
   from pressing Enter on a typed question to the answer's first word on screen.
   Floors: a prompt-toolkit loop that prints a fixed reply at once (the terminal round trip),
   and the same loop streaming from the mock over httpx and printing the first delta.

Both include tmux's own latency and the polling step (capture-pane, a few ms each), equally
for every case. Run: ./.venv/bin/python bench/repl_latency.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

from _common import ROOT, report, scratch_env, tmg_bin

from e2e.mock_llm import Echo, MockLLM
from e2e.tmux import Terminal

BARE_PROMPT = "from prompt_toolkit import PromptSession; PromptSession().prompt('> ')"
ECHO_LOOP = """
from prompt_toolkit import PromptSession
s = PromptSession()
while True:
    print('ANSWER ' + s.prompt('> '), flush=True)
"""
HTTPX_LOOP = """
import json, sys, httpx
from prompt_toolkit import PromptSession
s = PromptSession()
client = httpx.Client()
while True:
    q = s.prompt('> ')
    body = {"model": "mock", "stream": True, "messages": [{"role": "user", "content": q}]}
    with client.stream("POST", sys.argv[1] + "/chat/completions", json=body) as r:
        for line in r.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                delta = json.loads(line[6:])["choices"][0]["delta"].get("content")
                if delta:
                    sys.stdout.write(delta); sys.stdout.flush()
    print()
"""
PROMPT = r"^(default · \S+ )?>"


def prompt_ready(screen: str) -> bool:
    """The last line shown is an empty prompt (tmux strips its trailing space)."""
    lines = [ln for ln in screen.splitlines() if ln.strip()]
    return bool(lines) and re.fullmatch(r"(default · \S+ )?>", lines[-1].rstrip()) is not None


def launch_time(command: list[str], env: dict, cwd: Path) -> float:
    term = Terminal()
    try:
        start = time.perf_counter()
        term.start(command, env, cwd)
        term.wait_for(prompt_ready, timeout=60)
        return time.perf_counter() - start
    finally:
        term.close()


def enter_times(command: list[str], env: dict, cwd: Path, rounds: int) -> list[float]:
    term = Terminal()
    samples = []
    try:
        term.start(command, env, cwd)
        term.wait_for(prompt_ready, timeout=60)
        for i in range(rounds + 1):
            question = f"q{i}x"
            term.type(question)
            term.wait_for(re.escape(question) + "$")
            start = time.perf_counter()
            term.send("Enter")
            term.wait_for(r"ANSWER " + re.escape(question), timeout=60)
            if i:  # round 0 is the warm-up: the gateway's import and first connection
                samples.append(time.perf_counter() - start)
            term.wait_for(prompt_ready, timeout=60)
    finally:
        term.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    tmg, py = tmg_bin(), sys.executable
    with MockLLM(default=Echo(prefix="ANSWER ")) as llm:
        env, home = scratch_env(LANG=os.environ.get("LANG") or "C.UTF-8", PYTHONPATH=str(ROOT))
        native = Path(home) / "native.yaml"
        native.write_text(f"PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n    URL: {llm.url}\n")
        litellm_cfg = Path(home) / "litellm.yaml"
        litellm_cfg.write_text(native.read_text() + "    BACKEND: litellm\n")
        env_native = dict(env, TMG_CONFIG=str(native))
        env_litellm = dict(env, TMG_CONFIG=str(litellm_cfg), LITELLM_LOCAL_MODEL_COST_MAP="True")
        cwd = Path(home)

        launch_cases = {
            "bare prompt-toolkit prompt": ([py, "-c", BARE_PROMPT], env),
            "tmg (native backend)": ([tmg, "--new"], env_native),
            "tmg (litellm backend)": ([tmg, "--new"], env_litellm),
        }
        launch: dict[str, list[float]] = {name: [] for name in launch_cases}
        for _ in range(args.rounds):
            for name, (cmd, e) in launch_cases.items():
                launch[name].append(launch_time(cmd, e, cwd))
        print(report("REPL: launch -> usable prompt", launch, "bare prompt-toolkit prompt", ms=True, code=False))

        enter = {
            "prompt-toolkit loop, fixed reply": enter_times([py, "-c", ECHO_LOOP], env, cwd, args.rounds),
            "prompt-toolkit loop + httpx stream": enter_times([py, "-c", HTTPX_LOOP, llm.url], env, cwd, args.rounds),
            "tmg (native backend)": enter_times([tmg, "--new"], env_native, cwd, args.rounds),
            "tmg (litellm backend)": enter_times([tmg, "--new"], env_litellm, cwd, args.rounds),
        }
        print(report("REPL: Enter -> first rendered character (warm)", enter, "prompt-toolkit loop, fixed reply", ms=True, code=False))


if __name__ == "__main__":
    main()
