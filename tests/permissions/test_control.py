"""tmg's control files are the user's: no mode changes them without a question naming them, and
a config that would allow more is not applied from a reload after tools ran without a yes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tmg.config.model import Config, PermissionsConfig
from tmg.permissions.action import ToolAction
from tmg.permissions.control import ControlFiles
from tmg.permissions.engine import MODES, Answer, PermissionEngine
from tmg.skills.discovery import skill_roots


def setup(tmp_path: Path, mode: str = "default", allow=(), source: Path | None = None):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "TMG_HOME": str(tmp_path / "th")}
    config = Config(permissions=PermissionsConfig(mode, tuple(allow)), source=source)
    return PermissionEngine(lambda: config, cwd=str(work), env=env), work, env


def write(path: Path | str) -> ToolAction:
    return ToolAction("write_file", "write", paths=(str(path),), preview="+PERMISSIONS: {ALLOW: [shell]}")


@pytest.mark.parametrize("mode", MODES)
def test_the_config_in_use_whatever_its_path_asks_in_every_mode_naming_it(tmp_path, mode):
    config = tmp_path / "work" / "my-settings.yaml"  # tmg -c work/my-settings.yaml
    engine, work, _ = setup(tmp_path, mode, source=config)
    for action in (write(config), ToolAction("shell", "run", command="echo 'ALLOW: [shell]' >> my-settings.yaml"),
                   ToolAction("shell", "run", command="sed -i s/ASK/ALLOW/ my-settings.yaml")):
        judged = engine.judge(action)
        assert judged.decision == ("deny" if mode in ("read-only", "plan") else "ask"), (mode, action)
        if mode not in ("read-only", "plan"):
            assert str(config) in judged.reason and "the tmg config in use" in judged.reason
            assert judged.proposals == ()  # never "always"


@pytest.mark.parametrize("relative", [".git/hooks/pre-commit", ".git/config", ".git/modules/sub/hooks/post-checkout",
                                      "tmg.yaml", ".tmg/skills/x/SKILL.md", ".agents/skills/x/SKILL.md"])
def test_git_hooks_and_config_skills_and_a_folders_tmg_yaml_ask_in_accept_edits_and_yolo(tmp_path, relative):
    for mode in ("accept-edits", "yolo"):
        engine, work, _ = setup(tmp_path, mode)
        assert engine.judge(write(work / relative)).decision == "ask", (mode, relative)
    assert engine.judge(write(work / "src" / "app.py")).decision == "allow"  # an ordinary file in yolo


@pytest.mark.parametrize("where", ["xdg/tmg/permissions.json", "xdg/tmg/trusted.json", "xdg/tmg/config.yaml",
                                   "xdg/tmg/skills/x/SKILL.md", "th/sessions/default/x/history.jsonl",
                                   "home/.agents/skills/x/SKILL.md"])
def test_the_users_tmg_folder_and_tmg_home_are_control_files(tmp_path, where):
    control = ControlFiles({"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
                            "TMG_HOME": str(tmp_path / "th")}, str(tmp_path / "work"))
    assert control.reason(str(tmp_path / where))
    assert control.reason(str(tmp_path / "work" / "src" / "main.py")) is None


def test_every_skill_folder_tmg_reads_is_a_control_file(tmp_path):
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    control = ControlFiles(env, str(tmp_path / "work"))
    project, user = skill_roots(env, tmp_path / "work")
    for root in project + user:
        assert control.reason(str(root.path / "x" / "SKILL.md")), root


def test_a_rule_naming_the_file_exactly_lets_it_change_but_a_glob_does_not(tmp_path):
    engine, work, _ = setup(tmp_path, "accept-edits", allow=["write_file(**)"])
    assert engine.judge(write(work / ".git" / "hooks" / "pre-commit")).decision == "ask"
    engine, work, _ = setup(tmp_path, "accept-edits", allow=[f"write_file({tmp_path}/work/.git/hooks/pre-commit)"])
    assert engine.judge(write(work / ".git" / "hooks" / "pre-commit")).decision == "allow"


def test_accept_edits_covers_built_in_edits_inside_the_folder_only(tmp_path):
    engine, work, _ = setup(tmp_path, "accept-edits")
    assert engine.judge(write(work / "a.txt")).decision == "allow"
    assert engine.judge(ToolAction("mcp_fs_write", "write", server="fs")).decision == "ask"  # an MCP write
    assert engine.judge(ToolAction("mcp_fs_thing", "unknown", server="fs")).decision == "ask"
    assert engine.judge(ToolAction("mcp_fs_read", "read", server="fs")).decision == "allow"
    assert engine.judge(ToolAction("shell", "run", command="touch a")).decision == "ask"


class Asked:
    def __init__(self, *answers: str) -> None:
        self.answers, self.questions = list(answers), []

    async def __call__(self, question):
        self.questions.append(question)
        return Answer(self.answers.pop(0))


async def test_a_reload_that_widens_after_a_tool_ran_waits_for_a_yes(tmp_path):
    narrow = Config(permissions=PermissionsConfig("default", ("shell(touch a)",)), source=tmp_path / "tmg.yaml")
    live = [narrow]
    asker = Asked("no", "no")
    warnings: list[str] = []
    engine = PermissionEngine(lambda: live[0], cwd=str(tmp_path), env={"HOME": str(tmp_path)}, asker=asker,
                              warn=warnings.append)
    assert (await engine.check(ToolAction("shell", "run", command="touch a"))).allowed  # a tool ran
    live[0] = replace(narrow, permissions=PermissionsConfig("default", ("shell(touch a)", "shell")))
    rm = ToolAction("shell", "run", command="rm -rf x")
    assert engine.judge(rm).decision == "ask"  # held: the old rules judge
    assert any("would allow more (ALLOW adds shell)" in w for w in warnings)
    assert not (await engine.check(rm)).allowed  # "no" to the wider config, then rm itself is asked about
    (widen, asked_rm) = asker.questions
    assert widen.action.effect == "widen" and "ALLOW adds shell" in widen.action.preview
    assert asked_rm.action.command == "rm -rf x"


async def test_a_widening_the_user_says_yes_to_applies_and_a_narrowing_applies_at_once(tmp_path):
    narrow = Config(permissions=PermissionsConfig("default", ("shell(touch a)",)), source=tmp_path / "tmg.yaml")
    live = [narrow]
    engine = PermissionEngine(lambda: live[0], cwd=str(tmp_path), env={"HOME": str(tmp_path)}, asker=Asked("once"))
    assert (await engine.check(ToolAction("shell", "run", command="touch a"))).allowed
    live[0] = replace(narrow, permissions=PermissionsConfig("default", ("shell(touch a)", "shell(touch b)")))
    assert (await engine.check(ToolAction("shell", "run", command="touch b"))).reason.startswith("allowed by rule")
    live[0] = replace(narrow, permissions=PermissionsConfig("read-only", ()))
    assert engine.judge(ToolAction("shell", "run", command="touch a")).decision == "deny"  # stricter: no question


def test_before_any_tool_ran_a_reload_applies(tmp_path):
    live = [Config()]
    engine = PermissionEngine(lambda: live[0], cwd=str(tmp_path), env={"HOME": str(tmp_path)})
    assert engine.judge(ToolAction("shell", "run", command="touch a")).decision == "ask"
    live[0] = Config(permissions=PermissionsConfig("default", ("shell(touch a)",)))
    assert engine.judge(ToolAction("shell", "run", command="touch a")).decision == "allow"
