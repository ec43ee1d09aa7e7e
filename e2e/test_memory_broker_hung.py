"""A write the real PLUR never answers, while a REPL stays connected through the broker (issue 22).

In front of the real `@plur-ai/mcp` stands a stdio proxy (e2e/swallow_proxy.py) that forwards
MCP both ways and never answers one write: the first `tools/call` that carries the REPL's
teaching. What is observed: what the store holds (read back by a second PLUR process on the same
store), what the mock received (the instructions in the REPL's next request), and the spool in
TMG_HOME. Never time: the bounds are the product's own (memory's call bound, the broker's handed
write), and the test only waits for what they make happen.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

import pytest

from e2e.mock_llm import Text
from e2e.plur import instructions_part
from e2e.tmux import Terminal, tmux_available
from tests.support.plur_server import running
from tests.support.waiting import eventually
from tmg.mcp import ServerSpec, child_environment

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

PROXY = Path(__file__).resolve().parent / "swallow_proxy.py"
PROMPT = r"default · openai/mock-model >"


@pytest.fixture
def term():
    t = Terminal(width=160, height=40)
    yield t
    t.close()


def _config(entry: Path, home: Path, neutral: Path, flag: Path, marker: str) -> str:
    args = [str(PROXY), str(flag), marker, "--", "node", str(entry)]
    return ("MCP_SERVERS:\n  plur:\n"
            f"    COMMAND: {json.dumps(sys.executable)}\n    ARGS: {json.dumps(args)}\n"
            f"    ENV: {{HOME: {json.dumps(str(home))}, PLUR_TOOL_PROFILE: full, PLUR_DISABLE_EMBEDDINGS: '1'}}\n"
            f"    DIR: {json.dumps(str(neutral))}\n"
            "MEMORY:\n  LEARN: full\n")


def _stored(entry: Path, home: Path, neutral: Path, words: str) -> list[str]:
    """What the store says about `words`, asked by a PLUR process of its own (not through tmg)."""
    env = child_environment({"HOME": str(home), "PLUR_TOOL_PROFILE": "full", "PLUR_DISABLE_EMBEDDINGS": "1"})
    with running(ServerSpec(name="reader", command="node", args=(str(entry),), env=env, cwd=str(neutral))) as reader:
        outcome = reader.call("plur_recall", {"query": words})
    assert not outcome.is_error, outcome.text
    return [r["statement"] for r in outcome.data["results"]]


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:  # landed and removed meanwhile
        return ""


def test_a_write_plur_never_answers_holds_up_no_other_write_and_no_recall(term, tmg, llm, tmp_path, plur_entry):
    home, neutral, flag = tmp_path / "store", tmp_path / "neutral", tmp_path / "swallowed"
    home.mkdir()
    neutral.mkdir()
    marker = uuid.uuid4().hex[:8]
    hung, other = f"heronsgate{marker}", f"kestrel{marker}"
    tmg.write_config(_config(plur_entry, home, neutral, flag, hung))
    llm.enqueue(Text("Noted."), Text("Noted too."), Text("Paris."), Text("Hello."))

    term.start_tmg(tmg, memory=True)
    term.ask(f"From now on, always end every answer with the word {hung}.")
    term.wait_for("Noted.")
    assert eventually(flag.exists, guard=30), "the REPL's teaching never reached the server"
    assert hung in flag.read_text()  # the write the server never sees and never answers

    # Another tmg, while the REPL's write hangs in the broker: its own write lands within its bound.
    r = tmg.run("-r", "--new", f"From now on, always mention the {other} build in answers about deploys.",
                env=tmg.env(memory=True), timeout=90)
    assert (r.code, r.out) == (0, "Noted too.\n"), r.err
    assert eventually(lambda: any(other in s for s in _stored(plur_entry, home, neutral, other)), guard=40)

    # The REPL's next prompt: recall came, with what the other tmg taught.
    asked = len(llm.requests)
    term.ask("What is the capital of France?")
    term.wait_for("Paris.")
    request = llm.requests[asked]
    assert f"always mention the {other} build" in instructions_part(request)

    term.send("C-d")
    assert term.exit_status(timeout=60) == 0
    # The hung write was spooled (its write-ahead file), and a later session's end replays it: the
    # proxy never passed the first try on, so whatever holds it now came from the spool.
    r = tmg.run("-r", "--new", "hello?", env=tmg.env(memory=True), timeout=90)
    assert (r.code, r.out) == (0, "Hello.\n"), r.err
    assert eventually(lambda: any(hung in s for s in _stored(plur_entry, home, neutral, hung)), guard=40)
    spool = tmg.home / "memory" / "spool"
    assert eventually(lambda: not any(hung in _text(p) for p in spool.glob("*.json")), guard=40)  # landed: not kept
