"""Record the real PLUR server's replies that tests/memory/test_memory_results.py parses.

Re-record (needs node; installs the pinned @plur-ai/mcp on first use, ~15 s):

    ./.venv/bin/python -m tests.data.plur_replies.record

It starts the pinned server the way the live tests do (tests/support/plur_server.py: a fresh
HOME, keyword search only, the full tool profile), makes the calls in ``CALLS`` in order on one
empty store, and writes each reply exactly as it came (``isError`` and the text item) to
``plur-<version>.json`` next to this file. Nothing is edited by hand afterwards: a test that
needs a shape the server never sends (a malformed count) changes a recorded reply in the test.
"""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from tests.support.plur_server import PLUR_VERSION, real_plur_spec, running

HERE = Path(__file__).resolve().parent

ARCHITECTURAL = "The service layer talks to postgres via the repository module"
BEHAVIORAL = "Never indent the service layer YAML with tabs"
TERMINOLOGICAL = "A widget means a reusable dashboard component rendered in the service layer sidebar"

# (name, tool, arguments): the order matters (the first inject is on the empty store).
CALLS = [
    ("inject_empty", "plur_inject_hybrid", {"task": "how does the service layer reach postgres?"}),
    ("learn_architectural", "plur_learn", {"statement": ARCHITECTURAL, "type": "architectural"}),
    ("learn_behavioral", "plur_learn", {"statement": BEHAVIORAL}),
    ("learn_terminological", "plur_learn", {"statement": TERMINOLOGICAL, "type": "terminological"}),
    ("inject", "plur_inject_hybrid", {"task": "add a widget to the service layer: postgres, the repository "
                                               "module, tabs in YAML"}),
    ("learn_batch_one_blank", "plur_learn_batch", {"engrams": [{"statement": "Tests run under the heavy lock"},
                                                               {"statement": "   "}]}),
    ("learn_missing_statement", "plur_learn", {"type": "behavioral"}),
    ("recall", "plur_recall", {"query": "postgres repository module"}),
    ("capture", "plur_capture", {"summary": "asked how the service layer reaches postgres", "agent": "chat"}),
    ("capture_missing_summary", "plur_capture", {"agent": "chat"}),
    ("timeline", "plur_timeline", {}),
    ("status", "plur_status", {}),
]


def record(out: Path) -> None:
    replies = {}
    with tempfile.TemporaryDirectory() as root, running(real_plur_spec(Path(root), "full")) as server:
        for name, tool, arguments in CALLS:
            outcome = server.call(tool, arguments)
            replies[name] = {"tool": tool, "arguments": arguments, "is_error": outcome.is_error, "text": outcome.text}
    out.write_text(json.dumps({
        "server": f"@plur-ai/mcp {PLUR_VERSION}",
        "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
        "how": "python -m tests.data.plur_replies.record (see its docstring)",
        "replies": replies,
    }, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load(version: str = PLUR_VERSION) -> dict[str, dict]:
    """The recorded replies by name: ``{"tool", "arguments", "is_error", "text"}``."""
    return json.loads((HERE / f"plur-{version}.json").read_text(encoding="utf-8"))["replies"]


if __name__ == "__main__":
    target = HERE / f"plur-{PLUR_VERSION}.json"
    record(target)
    print(target, file=sys.stderr)
