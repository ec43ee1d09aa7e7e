"""tmg imports httpx without its HTTP/2 stack and its CLI, and loses nothing by it (issue 10, P2')."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from tmg.llm.http import httpx
left_out = sorted(m for m in ("h2", "hpack", "click", "rich", "pygments") if m in sys.modules)
none_left = sorted(name for name, module in sys.modules.items() if module is None)
client = httpx.Client(http2=True)  # httpx checks for h2 here: it must be importable again
from httpcore._sync.http2 import HTTP2Connection  # what httpcore imports for an HTTP/2 connection
import h2.connection
print(json.dumps({"left_out": left_out, "none_left": none_left, "http2": "h2" in sys.modules}))
"""


def test_httpx_comes_without_http2_and_its_cli_which_stay_importable() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["left_out"] == []  # none of them imported with httpx
    assert seen["none_left"] == []  # no import of them is left blocked
    assert seen["http2"] is True  # a client that asks for HTTP/2 gets it
