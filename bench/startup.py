"""P1 and P2 of quality.md, side by side in one run.

P1: `tmg --version`, `tmg --help`, `tmg -t` against `python -c pass` (target <= 8x).
P2: a one-shot `echo q | tmg` against the local mock API, memory off, against a bare
    `python -c "import litellm"` (target <= 1.15x) and, when `llm` (simonw) is on PATH or
    LLM_BIN, the same one-shot of `llm` against the same mock.

Both run this tree's code (PYTHONPATH: in a git worktree whose .venv is shared, `.venv/bin/tmg`
would import the main checkout's) from bytecode, as an installed tmg runs (`with_bytecode`).

Run: ./.venv/bin/python bench/startup.py [--rounds N] [--p1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from _common import ROOT, interleaved, report, scratch_env, timed, tmg_bin, with_bytecode

from e2e.mock_llm import MockLLM, Text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--p1", action="store_true", help="the fast paths only")
    args = parser.parse_args()
    tmg = tmg_bin()
    py = sys.executable
    with MockLLM(default=Text("four", chunks=2)) as llm:
        env, home = scratch_env(PYTHONPATH=str(ROOT))
        env = with_bytecode(env, home)
        config = Path(home) / "tmg.yaml"
        config.write_text(f"PROVIDERS:\n  mock:\n    MODEL: openai/mock\n    API_KEY: k\n    URL: {llm.url}\n")
        env["TMG_CONFIG"] = str(config)
        timed([tmg, "2+2?"], env=env)  # a session for -t to print
        p1 = measured({
            "python -c pass": {"cmd": [py, "-c", "pass"]},
            "tmg --version": {"cmd": [tmg, "--version"], "env": env},
            "tmg --help": {"cmd": [tmg, "--help"], "env": env},
            "tmg -t": {"cmd": [tmg, "-t"], "env": env},
        }, args.rounds)
        print(report("P1: fast paths (target <= 8x)", p1, "python -c pass"))
        if args.p1:
            return

        env_lite = dict(env, LITELLM_LOCAL_MODEL_COST_MAP="True")
        cases = {
            'python -c "import litellm"': {"cmd": [py, "-c", "import litellm"], "env": env_lite},
            "echo q | tmg (native backend)": {"cmd": [tmg, "--new", "-r"], "stdin": "2+2?\n", "env": env},
        }
        litellm_cfg = Path(home) / "litellm.yaml"
        litellm_cfg.write_text(config.read_text() + "    BACKEND: litellm\n")
        cases["echo q | tmg (litellm backend)"] = {"cmd": [tmg, "--new", "-r"], "stdin": "2+2?\n",
                                                  "env": dict(env, TMG_CONFIG=str(litellm_cfg))}
        llm_bin = os.environ.get("LLM_BIN") or shutil.which("llm")
        if llm_bin:
            llm_home = tempfile.mkdtemp(prefix="llm-bench-")
            Path(llm_home, "extra-openai-models.yaml").write_text(
                f"- model_id: mock\n  model_name: mock\n  api_base: {llm.url}\n  api_key_name: mock\n")
            Path(llm_home, "keys.json").write_text('{"mock": "k"}')
            cases["echo q | llm -m mock"] = {"cmd": [llm_bin, "-m", "mock"], "stdin": "2+2?\n",
                                            "env": dict(os.environ, LLM_USER_PATH=llm_home)}
        p2 = measured(cases, args.rounds)
        print(report("P2: one-shot against the local mock, memory off", p2, 'python -c "import litellm"'))


def measured(cases: dict[str, dict], rounds: int) -> dict[str, list[float]]:
    """``rounds`` interleaved rounds, after an untimed one that writes each case's bytecode."""
    interleaved(cases, 1)
    return interleaved(cases, rounds)


if __name__ == "__main__":
    main()
