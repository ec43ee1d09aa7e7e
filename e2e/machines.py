"""One of a person's machines for the memory e2e legs: the real `tmg` with the shipped config (the
pinned PLUR, LEARN full), its TMG_HOME, and a HOME of its own (PLUR's store, a git identity)."""

from __future__ import annotations

import json
from pathlib import Path

from e2e.conftest import TmgRunner
from e2e.mock_llm import Text
from tests.support.plur_server import running
from tmg.mcp import ServerSpec, child_environment
from tmg.memory.sync_record import record_path


class Machine:
    """One of the person's machines: a tmg with the shipped config (the pinned PLUR, LEARN full),
    its store in its own HOME, which has a git identity as a real machine's has."""

    def __init__(self, root: Path, llm, entry: Path, sync: str = "") -> None:
        self.tmg = TmgRunner(root, llm)
        self.home = root / "user-home"
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / ".gitconfig").write_text(f"[user]\n\tname = {root.name}\n\temail = {root.name}@example.com\n")
        self.store = self.home / ".plur"
        self.install_dir = entry.parents[4]
        self.entry = entry
        if sync:
            self.tmg.write_config(f"MEMORY:\n  SYNC:\n{sync}")

    def env(self, **extra: str) -> dict[str, str]:
        return self.tmg.env(memory=True, TMG_PLUR_DIR=str(self.install_dir), **extra)

    def run(self, *args: str, code: int = 0, cwd: Path | None = None, **extra: str):
        r = self.tmg.run(*args, env=self.env(**extra), timeout=120, cwd=cwd)
        assert r.code == code, (r.out, r.err)
        return r

    def ask(self, prompt: str, answer: str = "Noted.", cwd: Path | None = None):
        self.tmg.llm.enqueue(Text(answer))
        self.run("-r", prompt, cwd=cwd)
        return self.tmg.llm.requests[-1]

    @property
    def record(self) -> Path:
        return record_path(self.tmg.home, self.store)

    def last_sync(self) -> dict | None:
        return json.loads(self.record.read_text()) if self.record.exists() else None

    def plur(self):
        """PLUR itself on this machine's store (setting up what tmg has no command for)."""
        env = child_environment({"HOME": str(self.home), "PLUR_DISABLE_EMBEDDINGS": "1", "PLUR_TOOL_PROFILE": "full"})
        return running(ServerSpec(name="plur", command="node", args=(str(self.entry),), env=env, cwd="/"))
