"""Nothing private at rest in the open, and memory the user can look after: the real `tmg`, the
real `@plur-ai/mcp` (pinned, the shipped config), the mock API.

- A password said in prose, in a prompt and in an answer, in a one-shot (the server spawned
  directly) and a REPL session (through the broker), is in no file of PLUR's store, nor anywhere under
  TMG_HOME but the user's own record (history, transcript, input history: 0600).
- After those runs every file and folder of the store, of TMG_HOME and of the broker's folder has
  no group or other bit, under the usual umask 022; a store and a home an older tmg left open are
  tightened.
- `tmg memory list/search/forget` show and act on episodes (PLUR has no tool that forgets one:
  tmg removes it under PLUR's lock, and the server goes on reading and writing the file).
- `tmg memory add` teaches a pinned instruction that the next one-shot's request carries.
"""

from __future__ import annotations

import os
import re
import stat
import uuid
from pathlib import Path

import pytest

from e2e.mock_llm import Text
from e2e.tmux import Terminal, tmux_available
from tmg.broker.paths import socket_path
from tmg.memory.injector import INSTRUCTIONS_HEADING
from tmg.paths import runtime_dir

pytestmark = [pytest.mark.live, pytest.mark.in_process]  # tmg.run in this process: see tests/support/cli.py

PROMPT = r"default · openai/mock-model >"
# The user's own record keeps the user's words by design (README, "What tmg keeps"): 0600.
OWN_RECORD = ("history.jsonl", "transcript.md", "input_history")


class Shipped:
    """tmg runs with the shipped config (no MCP_SERVERS, no MEMORY): the pinned PLUR, LEARN full,
    its store in $HOME/.plur of a HOME of its own."""

    def __init__(self, tmg, root: Path, entry: Path) -> None:
        self.tmg = tmg
        self.home = root / "plur-home"
        self.home.mkdir()
        self.store = self.home / ".plur"
        self.install_dir = entry.parents[4]  # <dir>/node_modules/@plur-ai/mcp/dist/index.js

    def env(self, **extra: str) -> dict[str, str]:
        return self.tmg.env(memory=True, HOME=str(self.home), TMG_PLUR_DIR=str(self.install_dir), **extra)

    def run(self, *args: str, **extra: str):
        r = self.tmg.run(*args, env=self.env(**extra), timeout=90)
        assert r.code == 0, r.err
        return r

    def memory(self, *args: str):
        return self.tmg.run("memory", *args, env=self.env(), timeout=90)

    def broker_folder(self) -> Path:
        return socket_path(runtime_dir({"TMG_HOME": str(self.tmg.home)})).parent


@pytest.fixture
def shipped(tmg, tmp_path, plur_entry) -> Shipped:
    return Shipped(tmg, tmp_path, plur_entry)


def holding(root: Path, text: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and not p.is_socket() and text in p.read_text(errors="replace"))


def open_to_others(root: Path) -> list[str]:
    entries = [root, *root.rglob("*")]
    return [f"{stat.S_IMODE(p.lstat().st_mode):o} {p}" for p in entries
            if not p.is_symlink() and p.lstat().st_mode & 0o077]


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_a_prose_password_is_in_no_file_and_nothing_is_open_to_others(shipped, llm):
    tag = uuid.uuid4().hex[:8]
    said = {"repl prompt": f"Kx{tag}Pw", "repl answer": f"Sw{tag}!x", "one-shot prompt": f"Pq{tag}Zz",
            "one-shot answer": f"Uc{tag}Rl", "passphrase": f"ember {tag} lantern"}
    # What an older tmg left: a store and a home readable by everyone.
    shipped.store.mkdir(mode=0o755)
    (shipped.store / "config.yaml").write_text("{}\n")
    os.chmod(shipped.store, 0o755)
    os.chmod(shipped.store / "config.yaml", 0o644)
    (shipped.tmg.home / "sessions").mkdir(parents=True)
    (shipped.tmg.home / "memory-server.log").write_text("an old line\n")
    os.chmod(shipped.tmg.home, 0o755)

    llm.enqueue(Text(f"Connect with postgres://app:{said['one-shot answer']}@db.internal/app; the vault passphrase "
                     f"is {said['passphrase']}."),
                Text(f"Understood. For the record, the staging db password is {said['repl answer']}."))
    # First a one-shot that spawns the server itself (it creates the store's files), then a REPL
    # session through the broker.
    shipped.run("-r", f"how do I reach the db? my pw: {said['one-shot prompt']}", TMG_MEMORY_BROKER="0")
    term = Terminal(width=160, height=40)
    try:
        term.start_tmg(shipped.tmg, prompt=PROMPT, timeout=60, memory=True, HOME=str(shipped.home),
                       TMG_PLUR_DIR=str(shipped.install_dir))
        term.ask(f"From now on, deploy to staging before prod; the staging password is {said['repl prompt']}.")
        term.wait_for("Understood. For the record", timeout=60)
        term.wait_for(lambda s: s.count("default · openai/mock-model >") >= 2, scrollback=True, timeout=60)
        term.ask("/exit")
        assert term.exit_status(timeout=60) == 0
    finally:
        term.close()

    assert (shipped.store / "server.pid").exists()  # the server ran on this store (what it wrote is walked)
    for what, canary in said.items():
        assert holding(shipped.store, canary) == [], f"the {what} is in PLUR's store"
        kept = holding(shipped.tmg.home, canary)
        assert all(Path(p).name in OWN_RECORD for p in kept), f"the {what} is in {kept}"
    # The grep could see them: the user's own record keeps the prompts.
    assert holding(shipped.tmg.home, said["repl prompt"]) and holding(shipped.tmg.home, said["one-shot prompt"])

    broker = shipped.broker_folder()
    assert socket_path(broker).exists() and (shipped.tmg.home / "broker.log").exists()
    assert (shipped.tmg.home / "memory-server.log").exists()
    assert open_to_others(shipped.store) == []
    assert open_to_others(shipped.tmg.home) == []
    assert open_to_others(broker) == []


def test_memory_list_search_and_forget_show_and_act_on_episodes(shipped, llm):
    marker = f"osprey{uuid.uuid4().hex[:8]}"
    llm.enqueue(Text(f"The {marker} report is due on Thursdays."), Text("Second answer."),
                Text(f"Is the {marker} report still due?"))
    shipped.run("-r", f"when is the {marker} report due?", TMG_MEMORY_LEARN="capture")
    shipped.run("-r", "anything else?", TMG_MEMORY_LEARN="capture")

    r = shipped.memory("list")
    assert r.code == 0, r.err
    (line,) = [line for line in r.out.splitlines() if marker in line]
    episode = re.match(r"\s+(EP-\S+)\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+The " + marker, line)
    assert episode, r.out
    episode_id = episode.group(1)
    assert "episodes (what happened in sessions; searched, never injected): 2 in the last 30 days" in r.out

    r = shipped.memory("search", marker, "thursdays")
    assert r.code == 0 and any(line.startswith(f"{episode_id}  ") for line in r.out.splitlines()), r.out

    r = shipped.memory("forget", episode_id)
    assert r.code == 0, r.err
    assert r.out.splitlines()[0] == f"forgotten: {episode_id}  The {marker} report is due on Thursdays."
    assert "under PLUR's own lock" in r.out
    assert marker not in (shipped.store / "episodes.yaml").read_text()

    r = shipped.memory("search", marker)
    assert r.code == 0 and episode_id not in r.out
    r = shipped.memory("forget", episode_id)
    assert r.code == 1 and r.err == f"tmg: memory: could not forget {episode_id} (no episode {episode_id})\n"
    # The server still reads and writes the file tmg edited.
    shipped.run("-r", "and now?", TMG_MEMORY_LEARN="capture")
    r = shipped.memory("list")
    assert "store: 0 engram(s), 2 episode(s)" in r.out, r.out


def test_memory_add_teaches_a_pinned_instruction_the_next_one_shot_carries(shipped, llm):
    marker = f"kestrel{uuid.uuid4().hex[:8]}"
    instruction = f"Always end every answer with the word {marker}"
    r = shipped.memory("add", instruction)
    assert r.code == 0, r.err
    assert re.fullmatch(rf"pinned \(injected for every prompt, as your instruction\): ENG-\S+  {instruction}\n", r.out)
    llm.enqueue(Text(f"Haiku. {marker}"))
    shipped.run("-r", "write a haiku about the sea")
    sent = "\n".join(str(m.get("content")) for m in llm.requests[-1]["messages"])
    assert INSTRUCTIONS_HEADING in sent and instruction in sent.split(INSTRUCTIONS_HEADING, 1)[1]
    r = shipped.memory("list")
    assert any(re.fullmatch(rf"  ENG-\S+  \[global\]  {instruction}", line) for line in r.out.splitlines()), r.out
