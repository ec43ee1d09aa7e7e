"""The engine behind the registry: what runs, what asks, what is refused and what the model and
the user are told. The shell here is a real one (`sh -c`), described by the ToolAction contract
the built-in shell tool follows: effect `run`, `command` the line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tmg.config.loader import parse_config
from tmg.config.model import Config, PermissionsConfig
from tmg.config.trust import ProjectTrust
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import Answer, PermissionEngine, Question
from tmg.permissions.store import DecisionStore
from tmg.tools.registry import Tool, ToolRegistry, ToolResult


def cfg(allow=(), ask=(), deny=(), mode="default") -> Config:
    return Config(permissions=PermissionsConfig(mode, tuple(allow), tuple(ask), tuple(deny)))


class Shell(Tool):
    name = "shell"
    description = "run a command"
    parameters = {"type": "object", "properties": {"command": {"type": "string"}}}

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def action(self, arguments):
        return ToolAction(self.name, "run", command=arguments["command"], preview=arguments["command"])

    async def run(self, arguments):
        done = subprocess.run(["sh", "-c", arguments["command"]], cwd=self.cwd, capture_output=True, text=True)
        return ToolResult(done.stdout + done.stderr, done.returncode != 0)


class WriteFile(Tool):
    name = "write_file"
    description = "write a file"
    parameters = {"type": "object"}

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def action(self, arguments):
        return ToolAction(self.name, "write", paths=(arguments["path"],), preview=f"+{arguments['text']}")

    async def run(self, arguments):
        (self.cwd / arguments["path"]).write_text(arguments["text"])
        return ToolResult("written")


class Rig:
    def __init__(self, root: Path, config: Config, mode: str | None = None, answers=()) -> None:
        self.work = root / "work"
        self.work.mkdir(exist_ok=True)
        self.config = config
        self.records: list[str] = []
        self.refusals: list[str] = []
        self.questions: list[Question] = []
        self.answers = list(answers)
        self.store = DecisionStore(root / "xdg" / "tmg" / "permissions.json")
        asker = self._ask if answers else None
        self.engine = PermissionEngine(lambda: self.config, cwd=str(self.work),
                                       env={"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "xdg"),
                                            "TMG_HOME": str(root / "tmg-home")},
                                       store=self.store, mode=mode, asker=asker, record=self.records.append,
                                       refused=self.refusals.append)
        self.registry = ToolRegistry([Shell(self.work), WriteFile(self.work)], gate=self.engine)

    async def _ask(self, question: Question) -> Answer:
        self.questions.append(question)
        return self.answers.pop(0)

    async def shell(self, command: str) -> ToolResult:
        import json

        return await self.registry.call("shell", json.dumps({"command": command}), 10)

    async def write(self, path: str, text: str = "x") -> ToolResult:
        import json

        return await self.registry.call("write_file", json.dumps({"path": path, "text": text}), 10)


async def test_touch_is_refused_without_a_terminal_and_the_model_and_the_user_are_told_how_to_allow_it(tmp_path):
    rig = Rig(tmp_path, cfg())
    result = await rig.shell("touch x")
    assert result.is_error and result.content.startswith("refused:")
    assert "touch x" in result.content and "shell(touch x)" in result.content
    assert not (rig.work / "x").exists()
    (line,) = rig.refusals
    assert "shell(touch x)" in line and "PERMISSIONS.ALLOW" in line and "--permissions yolo" in line
    assert rig.engine.refusals == 1  # a one-shot exits 1 after it
    assert rig.records == ["shell `touch x` refused (running a command asks by default; no terminal to ask)"]


@pytest.mark.parametrize("config, mode", [(cfg(allow=["shell(touch)"]), None), (cfg(), "yolo"),
                                          (cfg(mode="yolo"), None)])
async def test_touch_runs_with_a_rule_or_in_yolo(tmp_path, config, mode):
    rig = Rig(tmp_path, config, mode=mode)
    result = await rig.shell("touch x")
    assert not result.is_error, result.content
    assert (rig.work / "x").exists()
    assert rig.refusals == []
    assert rig.records[0] in ("shell `touch x` allowed by rule shell(touch)", "shell `touch x` allowed by yolo mode")


async def test_an_allowed_prefix_does_not_carry_what_follows_it(tmp_path):
    rig = Rig(tmp_path, cfg(allow=["shell(git status)", "shell(echo)"]))
    (rig.work / "y").mkdir()
    assert (await rig.shell("git status && rm -rf y")).content.startswith("refused:")
    assert (await rig.shell("echo $(rm -rf y)")).content.startswith("refused:")
    assert (await rig.shell("echo `rm -rf y`")).content.startswith("refused:")
    assert (await rig.shell("git status; bash -c 'rm -rf y'")).content.startswith("refused:")
    assert (rig.work / "y").is_dir()
    assert "shell(rm -rf y)" in rig.refusals[0]  # what "always" would save: the part not yet allowed, exactly


async def test_a_pipeline_of_allowed_commands_runs(tmp_path):
    rig = Rig(tmp_path, cfg(allow=["shell(ls)", "shell(wc)"]))
    for name in ("a", "b", "c"):
        (rig.work / name).touch()
    result = await rig.shell("ls | wc -l")
    assert not result.is_error and result.content.strip() == "3"


@pytest.mark.parametrize("line", ["env X=1 rm -rf y", "sudo rm -rf y", "xargs rm -rf < list", "/bin/rm -rf y",
                                  "find . -name y -exec rm -rf {} +", "nice -n 5 rm -rf y", "sh -c 'rm -rf y'",
                                  "\"r\"'m' -rf y"])
async def test_a_deny_rule_is_not_bypassed_by_a_wrapper(tmp_path, line):
    rig = Rig(tmp_path, cfg(allow=["shell(env)", "shell(sudo)", "shell(xargs)", "shell(find)", "shell(nice)",
                                   "shell(sh)"], deny=["shell(rm)"]), mode="yolo")
    judgement = rig.engine.judge(ToolAction("shell", "run", command=line))
    assert judgement.decision == "deny", judgement


async def test_an_allow_for_a_name_does_not_cover_a_program_of_the_same_name_elsewhere(tmp_path):
    rig = Rig(tmp_path, cfg(allow=["shell(ls)"]))
    assert rig.engine.judge(ToolAction("shell", "run", command="./ls")).decision == "ask"
    assert rig.engine.judge(ToolAction("shell", "run", command="PATH=. ls")).decision == "ask"
    assert rig.engine.judge(ToolAction("shell", "run", command="ls > listing.txt")).decision == "ask"


async def test_always_saves_the_command_seen_the_same_call_runs_without_asking_and_a_revoke_asks_again(tmp_path):
    rig = Rig(tmp_path, cfg(), answers=[Answer("always"), Answer("once"), Answer("once")])
    assert not (await rig.shell("touch a")).is_error
    (question,) = rig.questions
    assert question.judgement.proposals == ("shell(touch a)",)  # what the user saw, not every touch
    assert [e.rule for e in rig.store.entries()] == ["shell(touch a)"]
    assert not (await rig.shell("touch a")).is_error
    assert len(rig.questions) == 1  # not asked again
    assert rig.records[1].startswith("shell `touch a` allowed by rule shell(touch a)")
    assert not (await rig.shell("touch b")).is_error
    assert len(rig.questions) == 2  # another file: asked
    assert [e.rule for e in rig.store.revoke("1")] == ["shell(touch a)"]
    assert not (await rig.shell("touch a")).is_error
    assert len(rig.questions) == 3
    assert "accepted once" in rig.records[-1]


async def test_yes_for_this_session_holds_in_this_engine_only_and_saves_nothing(tmp_path):
    rig = Rig(tmp_path, cfg(), answers=[Answer("session")])
    assert not (await rig.shell("touch a")).is_error
    assert "accepted for this session (shell(touch a))" in rig.records[0]
    assert not (await rig.shell("touch a")).is_error
    assert len(rig.questions) == 1 and rig.store.entries() == []
    assert "allowed for this session: shell(touch a)" in "\n".join(rig.engine.describe())
    later = Rig(tmp_path, cfg())  # another tmg: the session's yes is gone
    assert later.engine.judge(ToolAction("shell", "run", command="touch a")).decision == "ask"


async def test_a_command_outside_the_sandbox_asks_every_time_past_rules_yolo_and_a_session_yes(tmp_path):
    outside = ToolAction("shell", "run", command="touch x", outside_sandbox=True)
    for config, mode in [(cfg(allow=["shell(touch x)"]), None), (cfg(), "yolo"), (cfg(), "accept-edits")]:
        judgement = Rig(tmp_path, config, mode=mode).engine.judge(outside)
        assert judgement.decision == "ask" and "OUTSIDE the OS sandbox" in judgement.reason
        assert judgement.proposals == ()  # no "session" or "always" to offer
    assert Rig(tmp_path, cfg(deny=["shell(touch)"])).engine.judge(outside).decision == "deny"  # deny first
    assert Rig(tmp_path, cfg(allow=["shell(touch x)"]), mode="read-only").engine.judge(outside).decision == "deny"
    rig = Rig(tmp_path, cfg(), answers=[Answer("session"), Answer("always")])
    assert rig.engine.judge(ToolAction("shell", "run", command="touch x")).decision == "ask"
    for _ in range(2):  # a session or always answer is taken as once: the next call asks again
        assert (await rig.engine.check(outside)).allowed
    assert len(rig.questions) == 2 and rig.store.entries() == [] and "accepted once" in rig.records[-1]


async def test_no_with_a_note_reaches_the_model(tmp_path):
    rig = Rig(tmp_path, cfg(), answers=[Answer("no", "use a temp folder instead")])
    result = await rig.shell("touch x")
    assert result.is_error and "use a temp folder instead" in result.content
    assert not (rig.work / "x").exists()
    assert "declined with a note: use a temp folder instead" in rig.records[0]


async def test_modes(tmp_path):
    rig = Rig(tmp_path, cfg(mode="accept-edits"))
    assert not (await rig.write("notes.txt")).is_error
    assert (await rig.shell("touch x")).content.startswith("refused:")
    rig.config = cfg(mode="read-only")  # a reload applies at the next call
    result = await rig.write("other.txt")
    assert result.content.startswith("refused:") and "read-only" in result.content
    assert rig.engine.judge(ToolAction("read_file", "read", paths=("notes.txt",))).decision == "allow"


async def test_path_rules_cover_what_is_under_them_and_not_a_symlink_out_of_them(tmp_path):
    rig = Rig(tmp_path, cfg(allow=["write_file(src/**)"]))
    (rig.work / "src").mkdir()
    (rig.work / "src" / "out").symlink_to(tmp_path)
    assert rig.engine.judge(ToolAction("write_file", "write", paths=("src/a.py",))).decision == "allow"
    assert rig.engine.judge(ToolAction("write_file", "write", paths=("src/deep/a.py",))).decision == "allow"
    assert rig.engine.judge(ToolAction("write_file", "write", paths=("src/../a.py",))).decision == "ask"
    assert rig.engine.judge(ToolAction("write_file", "write", paths=("src/out/a.py",))).decision == "ask"


@pytest.mark.parametrize("path", [".env", "sub/.env.local", "/proc/self/environ", "~/.ssh/id_rsa",
                                  "../xdg/tmg/config.yaml", "../tmg-home/sessions/x"])
async def test_files_that_hold_secrets_ask_even_for_a_read_and_in_accept_edits(tmp_path, path):
    rig = Rig(tmp_path, cfg(mode="accept-edits"))
    judgement = rig.engine.judge(ToolAction("read_file", "read", paths=(path,)))
    assert judgement.decision == "ask" and judgement.reason.endswith("reading it asks first")
    assert rig.engine.judge(ToolAction("write_file", "write", paths=(path,))).decision == "ask"


async def test_mcp_tools_follow_their_annotations_and_consent_servers_always_ask(tmp_path):
    rig = Rig(tmp_path, cfg(allow=["mcp_gh_*"]))
    assert rig.engine.judge(ToolAction("mcp_fs_read", "read", server="fs")).decision == "allow"
    assert rig.engine.judge(ToolAction("mcp_fs_write", "write", server="fs")).decision == "ask"
    assert rig.engine.judge(ToolAction("mcp_fs_thing", "unknown", server="fs")).decision == "ask"
    assert rig.engine.judge(ToolAction("mcp_gh_push", "unknown", server="gh")).decision == "allow"
    consent = rig.engine.judge(ToolAction("mcp_gh_push", "read", server="gh", requires_consent=True))
    assert consent.decision == "ask" and consent.proposals == ()  # no "always" for it


async def test_a_bad_rule_is_one_warning_and_the_others_still_hold(tmp_path):
    rig = Rig(tmp_path, cfg(allow=["shell(git status", "shell(ls)"]))
    warnings = []
    rig.engine._warn = warnings.append
    assert rig.engine.judge(ToolAction("shell", "run", command="ls")).decision == "allow"
    assert rig.engine.judge(ToolAction("shell", "run", command="ls")).decision == "allow"
    assert len(warnings) == 1 and "shell(git status" in warnings[0]


def test_an_untrusted_project_may_deny_but_not_allow(tmp_path):
    raw = {"PERMISSIONS": {"MODE": "yolo", "ALLOW": ["shell(rm)"], "DENY": ["shell(curl)"]}}
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}  # no user config of its own
    config, warnings = parse_config(raw, env, tmp_path / "tmg.yaml", trust=ProjectTrust(tmp_path, False))
    assert config.permissions == PermissionsConfig("default", (), (), ("shell(curl)",))
    assert "PERMISSIONS.ALLOW" in warnings[0] and "PERMISSIONS.MODE" in warnings[0]
    trusted, _ = parse_config(raw, env, tmp_path / "tmg.yaml", trust=ProjectTrust(tmp_path, True))
    assert trusted.permissions.allow == ("shell(rm)",) and trusted.permissions.mode == "yolo"


async def test_a_tool_allowed_whole_does_not_reach_secret_files_but_a_rule_naming_them_does(tmp_path):
    rig = Rig(tmp_path, cfg(allow=["read_file"]))
    assert rig.engine.judge(ToolAction("read_file", "read", paths=(".env",))).decision == "ask"
    rig.config = cfg(allow=["read_file(.env)"])
    assert rig.engine.judge(ToolAction("read_file", "read", paths=(".env",))).decision == "allow"


async def test_a_revoke_from_elsewhere_applies_at_the_next_call(tmp_path):
    rig = Rig(tmp_path, cfg())
    other = DecisionStore(rig.store.path)  # another tmg, or `tmg permissions --revoke`
    other.add("shell(touch)", str(rig.work))
    for _ in range(3):
        assert rig.engine.judge(ToolAction("shell", "run", command="touch x")).decision == "allow"
        other.revoke("shell(touch)")
        assert rig.engine.judge(ToolAction("shell", "run", command="touch x")).decision == "ask"
        other.add("shell(touch)", str(rig.work))


async def test_a_write_outside_the_allowed_folders_is_refused_without_asking(tmp_path):
    """Asking would promise what cannot happen: the tool refuses the path whatever the answer."""
    from tmg.tools.edit import WriteFileTool
    from tmg.tools.files import RootGuard
    from tmg.tools.ledger import ReadLedger

    rig = Rig(tmp_path, cfg(), answers=[Answer("once")])
    registry = ToolRegistry([WriteFileTool(RootGuard([rig.work]), ReadLedger())], gate=rig.engine)
    result = await registry.call("write_file", '{"path": "../escape.txt", "content": "x"}', 10)
    assert result.is_error and "outside the allowed folders" in result.content
    assert rig.questions == [] and not (tmp_path / "escape.txt").exists()
    inside = await registry.call("write_file", '{"path": "kept.txt", "content": "x"}', 10)
    assert len(rig.questions) == 1 and not inside.is_error  # inside, it asks as before
