"""Checkpoints and rewind on real files: the real write_file, edit_file and shell tools, wrapped as
the session wraps them, a real History and checkpoint log in a session folder."""

from __future__ import annotations

import pytest

from tmg.checkpoints import log as log_module
from tmg.checkpoints.log import CheckpointLog
from tmg.checkpoints.rewind import apply_rewind, kept_memory_ids, plan_rewind, recent_prompts
from tmg.checkpoints.tools import PromptTracker, checkpointed, current_prompt
from tmg.errors import UsageError
from tmg.session.history import History
from tmg.tools.edit import EditFileTool, WriteFileTool
from tmg.tools.files import ReadFileTool, RootGuard
from tmg.tools.ledger import ReadLedger
from tmg.tools.shell import ShellTool


class Session:
    def __init__(self, tmp_path) -> None:
        self.work = tmp_path / "work"
        self.work.mkdir()
        self.dir = tmp_path / "session"
        self.history = History(self.dir / "history.jsonl")
        self.log = CheckpointLog(self.dir)
        self.said: list[str] = []
        guard = RootGuard([self.work])
        ledger = ReadLedger()
        tools = checkpointed([ReadFileTool(guard, ledger), WriteFileTool(guard, ledger), EditFileTool(guard, ledger),
                              ShellTool(self.work, {"PATH": "/usr/bin:/bin"}, default_timeout=lambda: 10)],
                             self.log, lambda: current_prompt(self.history.messages), guard.locate, self.said.append)
        self.tools = {t.name: t for t in tools}
        self.ts = 1_000.0

    def prompt(self, text: str) -> None:
        self.ts += 10
        self.history.append({"role": "user", "content": text, "ts": self.ts})

    def answer(self, text: str = "done") -> None:
        self.history.append({"role": "assistant", "content": text, "ts": self.ts + 1})

    async def call(self, tool: str, **arguments):
        result = await self.tools[tool].run(arguments)
        assert not result.is_error, result.content
        return result


@pytest.fixture
def s(tmp_path) -> Session:
    return Session(tmp_path)


async def test_a_rewritten_file_is_restored_and_a_created_one_removed(s):
    notes = s.work / "notes.txt"
    notes.write_text("my notes\n")
    notes.chmod(0o640)
    s.prompt("rewrite my notes and add a todo file")
    await s.call("read_file", path="notes.txt")
    await s.call("write_file", path="notes.txt", content="rewritten\n")
    await s.call("edit_file", path="notes.txt", old_string="rewritten", new_string="rewritten twice")
    await s.call("write_file", path="todo.md", content="- a\n")
    s.answer()
    plan = plan_rewind(s.history, s.log, 1)
    assert [c.path.name for c in plan.files] == ["notes.txt", "todo.md"] and plan.conflicts() == []
    lines = apply_rewind(plan, s.history, s.log)
    assert notes.read_text() == "my notes\n" and oct(notes.stat().st_mode & 0o777) == "0o640"
    assert not (s.work / "todo.md").exists()
    assert lines[0].startswith("rewound 1 prompt: the model no longer sees it")
    assert f"restored {notes}" in lines and f"removed {s.work / 'todo.md'} (the rewound prompt created it)" in lines
    assert [m["content"] for m in s.history.model_view] == []
    assert recent_prompts(s.history, s.log) == []  # taken back: not offered again


async def test_two_prompts_on_one_file_go_back_to_before_the_first(s):
    app = s.work / "app.py"
    app.write_text("v1\n")
    s.prompt("first")
    await s.call("read_file", path="app.py")
    await s.call("edit_file", path="app.py", old_string="v1", new_string="v2")
    s.answer()
    s.prompt("second")
    await s.call("edit_file", path="app.py", old_string="v2", new_string="v3")
    s.answer()
    listed = recent_prompts(s.history, s.log)
    assert [p.text for p in listed] == ["first", "second"] and listed[1].files == [str(app)]
    apply_rewind(plan_rewind(s.history, s.log, 2), s.history, s.log)
    assert app.read_text() == "v1\n"


async def test_a_file_changed_since_is_a_conflict_with_a_diff_and_can_be_kept(s):
    app = s.work / "app.py"
    app.write_text("v1\n")
    s.prompt("change it")
    await s.call("read_file", path="app.py")
    await s.call("edit_file", path="app.py", old_string="v1", new_string="v2")
    s.answer()
    app.write_text("v2\nmy own line\n")  # the user, after the prompt
    plan = plan_rewind(s.history, s.log, 1)
    (conflict,) = plan.conflicts()
    assert conflict.path == app
    assert "+my own line" in conflict.diff(s.log)
    lines = apply_rewind(plan, s.history, s.log, keep={app})
    assert app.read_text() == "v2\nmy own line\n" and f"kept your version of {app} (not restored)" in lines


async def test_shell_commands_are_named_as_beyond_undoing(s):
    s.prompt("build it")
    await s.call("shell", command="echo built > out.txt")
    s.answer()
    (prompt,) = recent_prompts(s.history, s.log)
    assert prompt.commands == ["echo built > out.txt"] and "ran 1 command" in prompt.line(1)
    lines = apply_rewind(plan_rewind(s.history, s.log, 1), s.history, s.log)
    assert lines[-1] == "shell commands ran and cannot be undone: `echo built > out.txt`"
    assert (s.work / "out.txt").exists()


async def test_a_huge_file_is_changed_without_a_copy_and_said_not_restorable(s, monkeypatch):
    monkeypatch.setattr(log_module, "MAX_KEPT_BYTES", 10)
    big = s.work / "big.txt"
    big.write_text("a line longer than ten bytes\n")
    s.prompt("replace it")
    await s.call("read_file", path="big.txt")
    await s.call("write_file", path="big.txt", content="short\n")
    s.answer()
    assert s.said == [f"{big} is not kept for a rewind: 29 bytes, over the 10 a checkpoint keeps"]
    plan = plan_rewind(s.history, s.log, 1)
    assert plan.conflicts() == []
    lines = apply_rewind(plan, s.history, s.log)
    assert f"not restored: {big} (29 bytes, over the 10 a checkpoint keeps)" in lines
    assert big.read_text() == "short\n"
    kept = [b.read_bytes() for b in (s.dir / "checkpoints" / "blobs").glob("*")]
    assert b"a line longer than ten bytes\n" not in kept  # no copy of the big file was made


async def test_memory_writes_are_recorded_against_their_prompt(s):
    tracker = PromptTracker(s.log, lambda: s.history.messages)

    class Turn:
        prompt_id = 7

    s.prompt("from now on, use tabs")
    tracker.before_turn(Turn())
    tracker.memory_written(7, "learn", "ENG-2030-01-01-001", "from now on, use tabs")
    s.answer()
    s.prompt("later")
    s.answer()
    plan = plan_rewind(s.history, s.log, 2)
    assert [(m["kind"], m["id"]) for m in plan.memory] == [("learn", "ENG-2030-01-01-001")]
    assert kept_memory_ids(plan_rewind(s.history, s.log, 1), s.log) == {"ENG-2030-01-01-001"}


def test_more_prompts_than_there_are_is_a_usage_error(s):
    s.prompt("only one")
    with pytest.raises(UsageError, match="only 1 to take back"):
        plan_rewind(s.history, s.log, 2)
