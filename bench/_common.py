"""Shared bench helpers: run commands interleaved, take medians, print ratios to a floor."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def tmg_bin() -> str:
    found = shutil.which("tmg", path=str(Path(sys.executable).parent))
    if not found:
        raise SystemExit("bench: run with the project's venv python (./.venv/bin/python bench/...)")
    return found


def timed(cmd: list[str] | str, *, stdin: str | None = None, env: dict | None = None, cwd: str | None = None) -> float:
    """Wall seconds of one run; fails loudly on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, cwd=cwd,
                          shell=isinstance(cmd, str))
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"bench: {cmd} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return wall


def interleaved(cases: dict[str, dict], rounds: int) -> dict[str, list[float]]:
    """Run every case once per round, in the same order, so noise hits all of them alike.

    A case's optional ``before`` (a callable) runs untimed before each of its runs.
    """
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, case in cases.items():
            args = dict(case)
            before = args.pop("before", None)
            if before is not None:
                before()
            samples[name].append(timed(**args))
    return samples


def report(title: str, samples: dict[str, list[float]], floor: str, *, ms: bool = False, code: bool = True) -> str:
    """A Markdown table of medians and their ratios to ``floor`` (seconds, or ms with ``ms``)."""
    base = statistics.median(samples[floor])
    unit = "median (ms)" if ms else "median wall (s)"
    lines = [f"### {title}", "", f"| case | {unit} | ratio to `{floor}` |", "|---|---|---|"]
    for name, values in samples.items():
        med = statistics.median(values)
        shown = f"{med * 1000:.0f}" if ms else f"{med:.3f}"
        label = f"`{name}`" if code else name
        lines.append(f"| {label} | {shown} | {med / base:.2f}x |")
    return "\n".join(lines) + "\n"


def scratch_env(**extra: str) -> tuple[dict[str, str], str]:
    home = tempfile.mkdtemp(prefix="tmg-bench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMG_")}
    # Memory off unless a bench asks for it, and a HOME of its own so that no PLUR it might
    # start writes to the real user's store.
    env.update(TMG_HOME=home, HOME=home, XDG_CONFIG_HOME=os.path.join(home, "xdg"), TMG_MEMORY_ENABLED="false")
    env.update(extra)
    return env, home


def with_bytecode(env: dict[str, str], home: str) -> dict[str, str]:
    """``env`` for running Python programs the way an installed one runs: from bytecode.

    With PYTHONDONTWRITEBYTECODE set (as in some shells and CI) and a source tree that has no
    ``__pycache__``, every run compiles each module it imports again (for tmg, tens of ms), which
    no installed copy does. The bytecode goes under ``home``, never into the source tree; a first,
    untimed run writes it.
    """
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(home, "pycache")
    return env

