"""The user's own PERMISSIONS hold in a project: a ./tmg.yaml is the config there, but the rules
of the user's config file are applied beside the project's (deny beats ask beats allow), its MODE
holds unless the project (trusted) sets one, and editing the user's file reloads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmg.config.inspect import render_config
from tmg.config.live import LiveConfig
from tmg.config.loader import load_config
from tmg.config.trust import TrustStore
from tmg.config.watcher import ConfigWatcher
from tmg.errors import ConfigError
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import PermissionEngine

TOUCH = ToolAction("shell", "run", command="touch x")


def setup(tmp_path: Path, user: str, project: str, trusted: bool = False) -> tuple[dict[str, str], Path, Path]:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home"), "OPENAI_API_KEY": "sk-test-1234"}
    mine = tmp_path / "xdg" / "tmg" / "config.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text(user)
    work = tmp_path / "work"
    work.mkdir()
    (work / "tmg.yaml").write_text(project)
    if trusted:
        TrustStore.for_env(env).trust(work)
    return env, work, mine


def engine(config, work: Path, env: dict[str, str], mode: str | None = None) -> PermissionEngine:
    return PermissionEngine(lambda: config, cwd=str(work), env=env, mode=mode)


@pytest.mark.parametrize("trusted", [True, False])
def test_the_users_deny_rule_holds_in_a_project_folder_even_in_yolo(tmp_path, trusted):
    env, work, mine = setup(tmp_path, "PERMISSIONS:\n  DENY: [shell(touch)]\n", "MAX_TURNS: 77\n", trusted)
    config, _ = load_config(None, env, work)
    assert config.source == work / "tmg.yaml" and config.max_turns == 77
    judged = engine(config, work, env, mode="yolo").judge(TOUCH)
    assert judged.decision == "deny"
    assert judged.reason == f"denied by rule shell(touch) (PERMISSIONS.DENY in {mine})"


def test_a_trusted_projects_allow_does_not_beat_the_users_deny_nor_the_users_allow_the_projects_deny(tmp_path):
    env, work, mine = setup(tmp_path, "PERMISSIONS:\n  DENY: [shell(touch)]\n  ALLOW: [shell(rm)]\n",
                            "PERMISSIONS:\n  ALLOW: [shell(touch)]\n  DENY: [shell(rm)]\n", trusted=True)
    config, _ = load_config(None, env, work)
    gate = engine(config, work, env)
    assert gate.judge(TOUCH).reason == f"denied by rule shell(touch) (PERMISSIONS.DENY in {mine})"
    assert f"  deny: shell(touch) ({mine}), shell(rm) ({work / 'tmg.yaml'})" in gate.describe()
    assert f"# and your PERMISSIONS rules from {mine}: DENY shell(touch); ALLOW shell(rm)" in render_config(config)
    assert gate.judge(ToolAction("shell", "run", command="rm y")).reason == \
        f"denied by rule shell(rm) (PERMISSIONS.DENY in {work / 'tmg.yaml'})"


def test_the_users_allow_rules_apply_in_an_untrusted_project_whose_own_allow_is_withheld(tmp_path):
    env, work, _ = setup(tmp_path, "PERMISSIONS:\n  ALLOW: [shell(ls)]\n", "PERMISSIONS:\n  ALLOW: [shell(touch)]\n")
    config, warnings = load_config(None, env, work)
    gate = engine(config, work, env)
    assert gate.judge(ToolAction("shell", "run", command="ls -l")).decision == "allow"
    assert gate.judge(TOUCH).decision == "ask"
    assert any("PERMISSIONS.ALLOW" in w and "tmg trust" in w for w in warnings)


@pytest.mark.parametrize("project, trusted, mode", [
    ("PERSON: p\n", False, "read-only"),  # the project sets none: the user's holds
    ("PERMISSIONS:\n  MODE: default\n", False, "read-only"),  # untrusted, allowing more: not taken
    ("PERMISSIONS:\n  MODE: yolo\n", True, "yolo"),  # the user trusted the project with it
])
def test_the_users_mode_holds_unless_the_project_may_and_does_set_one(tmp_path, project, trusted, mode):
    env, work, mine = setup(tmp_path, "PERMISSIONS:\n  MODE: read-only\n", project, trusted)
    config, _ = load_config(None, env, work)
    gate = engine(config, work, env)
    assert gate.mode() == mode
    if mode == "read-only":
        assert gate.mode_source() == f"PERMISSIONS.MODE in {mine}"
    assert engine(config, work, env, mode="accept-edits").mode() == "accept-edits"  # --permissions beats both


def test_an_untrusted_project_may_still_make_the_mode_stricter(tmp_path):
    env, work, _ = setup(tmp_path, "PERMISSIONS:\n  MODE: accept-edits\n", "PERMISSIONS:\n  MODE: read-only\n")
    config, _ = load_config(None, env, work)
    assert engine(config, work, env).mode() == "read-only"


def test_invalid_user_permissions_are_an_error_naming_the_users_file_not_skipped(tmp_path):
    env, work, mine = setup(tmp_path, "PERMISSIONS:\n  DENY: shell(touch)\n  MODE: careful\n", "PERSON: p\n")
    with pytest.raises(ConfigError) as caught:
        load_config(None, env, work)
    text = str(caught.value)
    assert str(mine) in text and "PERMISSIONS.MODE" in text and "line 3" in text


def test_with_an_explicit_config_the_users_file_is_not_added(tmp_path):
    # -c and TMG_CONFIG name the user's own choice of config: it is the whole of it, as before.
    env, work, _ = setup(tmp_path, "PERMISSIONS:\n  DENY: [shell(touch)]\n", "PERSON: p\n")
    config, _ = load_config(str(work / "tmg.yaml"), env, work)
    assert config.user_permissions is None
    assert engine(config, work, env, mode="yolo").judge(TOUCH).decision == "allow"


def test_editing_the_users_file_reloads_its_rules_in_a_project_session(tmp_path):
    env, work, mine = setup(tmp_path, "PERMISSIONS:\n  ALLOW: [shell(touch)]\n", "PERSON: p\n", trusted=True)
    config, _ = load_config(None, env, work)
    live = LiveConfig(config)
    reports: list[tuple[str, str]] = []
    watcher = ConfigWatcher(live, env, lambda level, text: reports.append((level, text)))
    gate = PermissionEngine(watcher.current, cwd=str(work), env=env)
    assert gate.judge(TOUCH).decision == "allow"
    mine.write_text("PERMISSIONS:\n  DENY: [shell(touch)]\n")
    assert gate.judge(TOUCH).decision == "deny"  # seen at the next call, without the watcher thread
    assert any(f"PERMISSIONS in {mine} changed" in text for _level, text in reports)
    mine.write_text("PERMISSIONS:\n  DENY: [shell(touch\n")  # a bad save keeps the last good rules
    assert gate.judge(TOUCH).decision == "deny"
    assert any("reload failed" in text and str(mine) in text for _level, text in reports)
