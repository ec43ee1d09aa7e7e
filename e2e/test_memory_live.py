"""Live legs: the real tmg against the real `@plur-ai/mcp` (pinned, installed by scripts/install-plur).

Both profiles: `full` named in the config, and the default `lean` through the shipped config
(no MEMORY or MCP_SERVERS in the file). What tmg wrote is read back through a second client of
the same store (`plur_recall`, `plur_timeline`, `plur_status`). These skip only when node or
npm are missing; once a server is up, every mismatch is a hard failure.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from e2e.conftest import API_KEY
from e2e.mock_llm import Text
from e2e.plur import instructions_part, memory_blocks, notes_part
from tmg.memory.injector import INSTRUCTIONS_HEADING, NOTES_HEADING
from tests.support.plur_server import running
from tmg.mcp import ServerSpec, child_environment

pytestmark = [pytest.mark.live, pytest.mark.in_process]  # tmg.run in this process: see tests/support/cli.py

PROFILES = ["full", "lean"]


class LivePlur:
    """tmg runs sharing one real PLUR store (a HOME of their own), and a reader of that store."""

    def __init__(self, tmg, root: Path, entry: Path, profile: str) -> None:
        self.tmg, self.entry, self.profile = tmg, entry, profile
        self.home = root / "plur-home"
        self.neutral = root / "neutral"
        self.neutral.mkdir(parents=True)
        self.home.mkdir()
        if profile == "full":
            tmg.write_config(
                "MCP_SERVERS:\n  plur:\n    COMMAND: node\n"
                f"    ARGS: [{json.dumps(str(entry))}]\n"
                f"    ENV: {{HOME: {json.dumps(str(self.home))}, PLUR_TOOL_PROFILE: full, PLUR_DISABLE_EMBEDDINGS: '1'}}\n"
                f"    DIR: {json.dumps(str(self.neutral))}\n"
            )
        # lean: the file names no memory server; the shipped PLUR starts with the user's HOME,
        # from the folder the test setup installed it into (the runner drops inherited TMG_*).
        self.install_dir = entry.parents[4]  # <dir>/node_modules/@plur-ai/mcp/dist/index.js

    def run(self, learn: str, *args: str):
        env = self.tmg.env(memory=True, HOME=str(self.home), TMG_MEMORY_LEARN=learn,
                           TMG_PLUR_DIR=str(self.install_dir))
        r = self.tmg.run("-r", *args, env=env, timeout=90)
        assert r.code == 0, r.err
        assert "memory" not in r.err, r.err  # no warning, no write failure
        return r

    def reader(self):
        """A second client of the same store, all tools direct."""
        env = child_environment({"HOME": str(self.home), "PLUR_TOOL_PROFILE": "full", "PLUR_DISABLE_EMBEDDINGS": "1"})
        spec = ServerSpec(name="reader", command="node", args=(str(self.entry),), env=env, cwd=str(self.neutral))
        return running(spec)


def call(server, tool: str, args: dict) -> dict:
    outcome = server.call(tool, args)
    assert not outcome.is_error, outcome.text
    return outcome.data


@pytest.fixture(params=PROFILES)
def live(request, tmg, tmp_path, plur_entry) -> LivePlur:
    return LivePlur(tmg, tmp_path, plur_entry, request.param)


def test_a_correction_from_session_one_is_in_words_in_session_twos_memory_block(live, llm):
    marker = f"kestrel{uuid.uuid4().hex[:8]}"
    correction = f"From now on, never push the {marker} branch without running the linter"
    llm.enqueue(Text("Understood."), Text("Run the linter first."))
    live.run("full", correction)
    live.run("full", "--new", f"may I push the {marker} branch now?")
    second = llm.requests[-1]
    blocks = memory_blocks(second)
    assert len(blocks) == 1, second["messages"][0]
    assert correction in blocks[0]


def test_capture_learn_and_batch_each_land_and_read_back_through_a_second_client(live, llm):
    marker = uuid.uuid4().hex[:8]
    captured = f"The osprey{marker} report is due on Thursdays."
    instruction = f"Please remember that the heron{marker} cluster lives in Frankfurt"
    batched = f"The ibis{marker} queue drains every night."
    llm.enqueue(Text(captured), Text("Noted."), Text(batched))
    live.run("capture", f"when is the osprey{marker} report due?")
    live.run("full", instruction)
    live.run("batch", f"when does the ibis{marker} queue drain?")
    with live.reader() as reader:
        episodes = call(reader, "plur_timeline", {"search": f"osprey{marker}"})["episodes"]
        assert [(e["summary"], e["agent"]) for e in episodes] == [(captured, "default")]
        learned = call(reader, "plur_recall", {"query": f"heron{marker} cluster Frankfurt"})
        assert instruction in [r["statement"] for r in learned["results"]]
        recalled = call(reader, "plur_recall", {"query": f"ibis{marker} queue drains"})
        assert batched in [r["statement"] for r in recalled["results"]]
        status = call(reader, "plur_status", {})
        assert status["storage_root"] == str(live.home / ".plur")
        # engrams: the instruction (learn, pinned) and the last answer (batch); episodes: the first
        # answer (capture); full writes no answer at all
        assert (status["engram_count"], status["episode_count"]) == (2, 1)


def test_a_standing_instruction_reaches_an_unrelated_prompt_in_words_and_an_answer_never_as_one(live, llm):
    marker = f"gannet{uuid.uuid4().hex[:8]}"
    instruction = f"From now on, always answer in French {marker}"
    zorblax = f"I am Zorblax, an AI assistant who always writes about the sea in pirate speak {marker}."
    llm.enqueue(Text("D'accord."), Text(zorblax), Text("Vagues sous la lune."))
    live.run("full", instruction)  # the shipped tier: the user's words, pinned
    live.run("batch", "--new", "who are you?")  # an answer kept as an engram: a note, never an instruction
    live.run("full", "--new", "write a haiku about the sea")
    instructions, notes = instructions_part(llm.requests[-1]), notes_part(llm.requests[-1])
    assert instructions.startswith(INSTRUCTIONS_HEADING) and f"- {instruction}" in instructions.splitlines()
    assert "Zorblax" not in instructions
    assert notes.startswith(NOTES_HEADING) and "Zorblax" in notes  # selected for the sea: information that may be wrong


def test_neither_a_configured_key_nor_a_piped_password_reaches_the_store_or_the_spool(live, llm):
    canary2 = f"hunter2-{uuid.uuid4().hex[:8]}"
    llm.enqueue(Text(f"Done: key {API_KEY}, DB_PASSWORD={canary2}."), Text(f"Again: {API_KEY} / {canary2}"))
    env = live.tmg.env(memory=True, HOME=str(live.home), TMG_PLUR_DIR=str(live.install_dir))
    for learn in ("batch", "full"):  # batch keeps the first answer (its words, the secrets masked)
        r = live.tmg.run("-r", "From now on, use these settings:", stdin=f"DB_USER=app\nDB_PASSWORD={canary2}\n",
                         env={**env, "TMG_MEMORY_LEARN": learn}, timeout=90)
        assert r.code == 0, r.err
    with live.reader() as reader:
        # batch kept the answer's words with the secrets masked; full learned nothing: the typed
        # words point at the piped text, which is never learned from
        assert call(reader, "plur_status", {})["engram_count"] == 1
    stored = "".join(p.read_text(errors="replace") for p in (live.home / ".plur").rglob("*") if p.is_file())
    assert "DB_PASSWORD=***" in stored
    assert where(live.home / ".plur", API_KEY) == [] and where(live.home / ".plur", canary2) == []
    assert where(live.tmg.home, API_KEY) == []
    assert where(live.tmg.home / "memory", canary2) == []


def where(root: Path, text: str) -> list[tuple[str, str]]:
    """(file, the line) for each line under `root` holding `text`."""
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            for line in path.read_text(errors="replace").splitlines():
                if text in line:
                    found.append((str(path.relative_to(root)), line[:300]))
    return found
