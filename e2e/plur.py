"""fakeplur for end-to-end runs: a config entry pointing tmg at it, and its store and call log
read back the way a test asserts on what the server observed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


class FakePlur:
    """One fakeplur store (and call log) under ``root``, shared by every tmg run of a test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "plur-home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.store = root / "plur-store.json"
        self.log = root / "plur-calls.jsonl"
        self.seed_file = root / "plur-seed.json"

    def entry(self, *, reject: tuple[str, ...] = (), seed: list[Any] | None = None, profile: str = "lean",
              poison: str | None = None) -> str:
        """The `MCP_SERVERS.plur` block of a config."""
        env = {"PYTHONPATH": str(REPO), "HOME": str(self.home), "FAKE_PLUR_STORE": str(self.store),
               "FAKE_PLUR_LOG": str(self.log), "PLUR_TOOL_PROFILE": profile}
        if reject:
            env["FAKE_PLUR_REJECT"] = ",".join(reject)
        if poison:
            env["FAKE_PLUR_POISON"] = poison
        if seed is not None:
            self.seed_file.write_text(json.dumps(seed))
            env["FAKE_PLUR_SEED"] = str(self.seed_file)
        lines = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in env.items())
        return (f"MCP_SERVERS:\n  plur:\n    COMMAND: {json.dumps(sys.executable)}\n    ARGS: [-m, fakeplur]\n"
                f"    ENV:\n{lines}    TIMEOUT: 20\n")

    def config(self, learn: str = "batch", **entry: Any) -> str:
        return self.entry(**entry) + f"MEMORY:\n  LEARN: {learn}\n"

    def _data(self) -> dict[str, Any]:
        return json.loads(self.store.read_text()) if self.store.exists() else {}

    def engrams(self) -> list[dict[str, Any]]:
        return list(self._data().get("engrams", []))

    def statements(self) -> list[str]:
        return [e["statement"] for e in self.engrams()]

    def episodes(self) -> list[dict[str, Any]]:
        return list(self._data().get("episodes", []))

    def calls(self, tool: str | None = None) -> list[dict[str, Any]]:
        """What tmg sent, as fakeplur logged it (`tool` is the real target, through plur_admin or not)."""
        if not self.log.exists():
            return []
        calls = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [c for c in calls if tool is None or c["tool"] == tool]

    def held(self) -> list[str]:
        """The tools of the calls FAKE_PLUR_DELAY is holding (or held), in arrival order."""
        held = Path(f"{self.log}.held")
        return held.read_text().splitlines() if held.exists() else []

    @staticmethod
    def payload(call: dict[str, Any]) -> dict[str, Any]:
        """A logged call's arguments to the tool itself (unwrapped from plur_admin)."""
        return call["args"]["args"] if call["called"] == "plur_admin" else call["args"]


def system_text(request: Any) -> str:
    first = request["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def memory_blocks(request: Any) -> list[str]:
    """The memory parts in a request's messages, each from its heading to its end (the user's
    instructions at the end of the system message, recalled notes beside a user turn), in order."""
    from tmg.memory.framing import INSTRUCTIONS_HEADING, NOTES_HEADING, SHARED_HEADING

    blocks = []
    for message in request["messages"]:
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content or []
                                                            if isinstance(p, dict)]
        for text in parts:
            for heading in (INSTRUCTIONS_HEADING, SHARED_HEADING, NOTES_HEADING):
                start = text.find(heading)
                while start != -1:
                    end = text.find("\n\n", start)
                    blocks.append(text[start:] if end == -1 else text[start:end])
                    start = text.find(heading, start + len(heading))
    return blocks


def instructions_part(request: Any) -> str:
    """The user's standing instructions the request carries at the end of its system message ("" when none)."""
    from tmg.memory.framing import INSTRUCTIONS_HEADING

    system = system_text(request)
    return system[system.index(INSTRUCTIONS_HEADING):] if INSTRUCTIONS_HEADING in system else ""


def notes_part(request: Any) -> str:
    """The recalled notes the request carries, as the system message right before its latest user
    turn ("" when none)."""
    from tmg.memory.framing import NOTES_HEADING

    messages = request["messages"]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    before = messages[last - 1] if last > 0 else {}
    text = before.get("content") if before.get("role") == "system" else ""
    return text if isinstance(text, str) and text.startswith(NOTES_HEADING) else ""
