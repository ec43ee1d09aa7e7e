"""/rewind in the chat: the recent prompts listed to choose from, a changed file asked about."""

from __future__ import annotations

from types import SimpleNamespace

from tmg.checkpoints.log import CheckpointLog
from tmg.checkpoints.tools import current_prompt
from tmg.repl.rewind import rewind
from tmg.session.history import History


class Screen:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def say(self, text: str) -> None:
        self.lines.append(text)

    info = hint = error = say


class Transcript:
    def __init__(self) -> None:
        self.notices: list[str] = []

    def notice(self, text: str) -> None:
        self.notices.append(text)


def session(tmp_path):
    history = History(tmp_path / "s" / "history.jsonl")
    log = CheckpointLog(tmp_path / "s")
    return SimpleNamespace(engine=SimpleNamespace(history=history), checkpoints=log, memory=None,
                           transcript=Transcript())


def prompt_changing(s, path, text, before, after, ts):
    s.engine.history.append({"role": "user", "content": text, "ts": ts})
    key = current_prompt(s.engine.history.messages)
    path.write_text(before)
    s.checkpoints.keep(key, path)
    path.write_text(after)
    s.checkpoints.left(key, path)
    s.engine.history.append({"role": "assistant", "content": "done", "ts": ts + 1})


def answers(*typed):
    queue = list(typed)

    async def ask(_question: str):
        return queue.pop(0)

    return ask


async def test_without_a_number_it_lists_the_prompts_and_asks_how_many(tmp_path):
    s, screen = session(tmp_path), Screen()
    notes = tmp_path / "notes.txt"
    prompt_changing(s, notes, "rewrite my notes", "mine\n", "theirs\n", 100.0)
    s.engine.history.append({"role": "user", "content": "thanks", "ts": 200.0})
    await rewind(s, screen, "", answers("2"))
    assert screen.lines[0] == "recent prompts (1 is the latest):"
    assert screen.lines[1].startswith("  1. ") and screen.lines[1].endswith("thanks")
    assert "rewrite my notes  (changed notes.txt)" in screen.lines[2]
    assert notes.read_text() == "mine\n"
    assert any(line.startswith("rewound 2 prompts") for line in screen.lines)
    assert s.transcript.notices[0].startswith("rewind: rewound 2 prompts")


async def test_a_file_changed_since_is_asked_about_and_no_keeps_it(tmp_path):
    s, screen = session(tmp_path), Screen()
    notes = tmp_path / "notes.txt"
    prompt_changing(s, notes, "rewrite my notes", "mine\n", "theirs\n", 100.0)
    notes.write_text("theirs\nand my edit\n")
    await rewind(s, screen, "1", answers("n"))
    assert f"{notes} changed since the rewound prompt left it:" in screen.lines
    assert notes.read_text() == "theirs\nand my edit\n"
    assert f"kept your version of {notes} (not restored)" in screen.lines
