"""Defaults that refuse: a registry without a permission gate runs nothing, and a saved decision
that no longer parses is said once, with its file (a deny of that kind asks, it never vanishes)."""

from __future__ import annotations

import json

from tmg.config.model import Config
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import PermissionEngine
from tmg.permissions.store import DecisionStore
from tmg.tools.registry import Tool, ToolRegistry, ToolResult


class Touch(Tool):
    name, description, parameters = "touch", "make a file", {"type": "object"}

    def __init__(self, path) -> None:
        self.path = path

    def action(self, arguments):
        return ToolAction(self.name, "write", paths=(str(self.path),))

    async def run(self, arguments):
        self.path.touch()
        return ToolResult("made it")


async def test_a_registry_without_a_gate_refuses_and_runs_nothing(tmp_path):
    registry = ToolRegistry([Touch(tmp_path / "x")])
    result = await registry.call("touch", "{}", 5)
    assert result.is_error and result.content.startswith("refused:") and "no permission engine" in result.content
    assert not (tmp_path / "x").exists()


def saved(tmp_path, *entries: dict) -> DecisionStore:
    path = tmp_path / "xdg" / "tmg" / "permissions.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "decisions": list(entries)}))
    return DecisionStore(path)


def test_a_saved_deny_that_no_longer_parses_is_said_once_and_its_tool_asks(tmp_path):
    work = str(tmp_path)
    store = saved(tmp_path, {"rule": "shell(rm -rf", "decision": "deny", "folder": work},
                  {"rule": "shell(ls", "decision": "allow", "folder": work})
    warnings: list[str] = []
    engine = PermissionEngine(lambda: Config(), cwd=work, env={"HOME": work}, store=store, mode="yolo",
                              warn=warnings.append)
    for _ in range(3):
        judged = engine.judge(ToolAction("shell", "run", command="rm -rf x"))
        assert judged.decision == "ask" and "a deny that no longer parses" in judged.reason  # even in yolo
    assert engine.judge(ToolAction("read_file", "read", paths=("a",))).decision == "allow"  # other tools: as before
    assert len(warnings) == 2  # each said once, whatever the number of checks
    assert any(f"a saved deny in {store.path} does not parse" in w and "every shell call asks" in w for w in warnings)
    assert any(f"a saved decision in {store.path} does not parse" in w and "--revoke" in w for w in warnings)


def test_a_saved_whole_program_from_the_old_prompt_is_said_once_and_not_applied(tmp_path):
    work = str(tmp_path)
    store = saved(tmp_path, *({"rule": r, "decision": "allow", "folder": work} for r in
                              ("shell(rm)", "shell(git)", "shell(find)", "shell(python3)", "shell(touch a)")))
    warnings: list[str] = []
    engine = PermissionEngine(lambda: Config(), cwd=work, env={"HOME": work}, store=store, warn=warnings.append)
    for line in ("rm -rf /elsewhere", "git push", "find . -delete", "python3 x.py"):
        assert engine.judge(ToolAction("shell", "run", command=line)).decision == "ask", line
    assert engine.judge(ToolAction("shell", "run", command="touch a")).decision == "allow"
    assert len(warnings) == 4 and all("is not applied" in w and str(store.path) in w for w in warnings)
