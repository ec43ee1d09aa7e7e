"""`tmg -t`, `--version` and `--help` must never import litellm or mcp (quality.md P1)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from e2e.mock_llm import Text

HEAVY = ("litellm", "mcp", "openai", "httpx", "watchfiles", "prompt_toolkit")

PROBE = """
import atexit, json, sys
def report():
    heavy = sorted({m.split('.')[0] for m in sys.modules} & set(%r))
    sys.stderr.write('\\nIMPORTED=' + json.dumps(heavy) + '\\n')
atexit.register(report)
sys.argv = ['tmg'] + %r
from tmg.cli import main
main()
"""


def imported_heavy(tmg, *args: str) -> tuple[int, list[str]]:
    code = PROBE % (HEAVY, list(args))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmg.work,
                          env=tmg.env(), stdin=subprocess.DEVNULL, timeout=60)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("IMPORTED=")][-1]
    return proc.returncode, json.loads(line.split("=", 1)[1])


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-t"], ["-t", "--json"], ["sessions"]])
def test_fast_paths_import_no_heavy_module(tmg, llm, args):
    llm.enqueue(Text("an answer"))
    assert tmg.run("a question").code == 0  # so -t has a session to print
    code, heavy = imported_heavy(tmg, *args)
    assert code == 0
    assert heavy == []


def test_the_probe_would_see_a_heavy_import(tmg, llm):
    # The same probe around a real one-shot does see the gateway's HTTP stack: it can fail.
    llm.enqueue(Text("an answer"))
    code, heavy = imported_heavy(tmg, "question")
    assert code == 0 and "httpx" in heavy
