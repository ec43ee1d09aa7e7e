"""HOOKS and MAX_BUDGET_USD in the config: Claude Code's shape validated, a project's hooks only
in a trusted folder, the user's own in every folder, and the matcher's rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tmg.config.hook_schema import matches
from tmg.config.inspect import render_config
from tmg.config.loader import load_config
from tmg.config.trust import TrustStore
from tmg.errors import ConfigError

PROVIDER = "PROVIDERS:\n  x: {MODEL: openai/gpt-4o-mini, API_KEY: k}\n"
CLAUDE_SHAPE = PROVIDER + """\
HOOKS:
  PreToolUse:
    - matcher: shell|write_file
      hooks:
        - type: command
          command: "${CLAUDE_PROJECT_DIR}/check.sh"
          timeout: 5
  Stop:
    - COMMAND: ./stop.sh
"""


def load(tmp_path: Path, text: str, env: dict[str, str] | None = None):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return load_config(str(path), {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), **(env or {})}, tmp_path)


def test_claude_codes_shape_pastes_in_and_the_shell_keeps_its_variables(tmp_path):
    config, warnings = load(tmp_path, CLAUDE_SHAPE)
    assert warnings == []
    pre, stop = config.hooks
    assert (pre.event, pre.matcher, pre.command, pre.timeout) == ("PreToolUse", "shell|write_file",
                                                                   "${CLAUDE_PROJECT_DIR}/check.sh", 5.0)
    assert (stop.event, stop.matcher, stop.timeout) == ("Stop", "", 60.0)  # Claude Code's default
    shown = render_config(config)
    assert "PreToolUse shell|write_file" in shown and "timeout 5 s" in shown


@pytest.mark.parametrize("hooks, message", [
    ("  PreToolUse:\n    - MATCHER: '('\n      COMMAND: x\n", "MATCHER is not a valid regular expression"),
    ("  PreToolUse:\n    - MATCHER: shell\n", "needs HOOKS"),
    ("  Stop:\n    - COMMAND: x\n      TIMEOUT: 0\n", "TIMEOUT must be a number of seconds above 0"),
    ("  Stop:\n    - HOOKS: [{TYPE: prompt, COMMAND: x}]\n", "tmg runs only command hooks"),
    ("  Stop: {COMMAND: x}\n", "must be a list of matcher groups"),
])
def test_a_wrong_hook_is_an_error_naming_its_path(tmp_path, hooks, message):
    with pytest.raises(ConfigError, match=message) as err:
        load(tmp_path, PROVIDER + "HOOKS:\n" + hooks)
    assert "HOOKS." in str(err.value)


def test_an_unknown_event_warns_with_the_closest_name(tmp_path):
    _config, warnings = load(tmp_path, PROVIDER + "HOOKS:\n  PreToolUs:\n    - COMMAND: x\n")
    assert warnings == ["HOOKS.PreToolUs is not a hook event tmg runs, so it is ignored; did you mean PreToolUse?"]


def test_matcher_rule_as_claude_code():
    assert matches("", "shell") and matches("*", "mcp_x_y")
    assert matches("shell", "shell") and not matches("shell", "shell2")  # a plain name is exact
    assert matches("read_file|shell", "shell") and not matches("read_file|shell", "edit_file")
    assert matches("mcp_github_.*", "mcp_github_search") and matches("_file$", "write_file")


def test_max_budget_usd_is_a_number_and_unset_is_no_cap(tmp_path):
    assert load(tmp_path, PROVIDER)[0].max_budget_usd is None
    assert load(tmp_path, PROVIDER + "MAX_BUDGET_USD: 0.25\n")[0].max_budget_usd == 0.25
    with pytest.raises(ConfigError, match="MAX_BUDGET_USD must be a number"):
        load(tmp_path, PROVIDER + "MAX_BUDGET_USD: lots\n")


def project(tmp_path: Path, user_hooks: str = "") -> tuple[dict[str, str], Path]:
    work = tmp_path / "work"
    work.mkdir()
    (work / "tmg.yaml").write_text("PROVIDERS:\n  x: {MODEL: openai/gpt-4o-mini}\n"
                                   "HOOKS:\n  PreToolUse:\n    - COMMAND: ./.tmg/guard.sh\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    if user_hooks:
        user = tmp_path / "xdg" / "tmg" / "config.yaml"
        user.parent.mkdir(parents=True)
        user.write_text("HOOKS:\n" + user_hooks)
    return env, work


def test_an_untrusted_projects_hooks_are_withheld_and_named(tmp_path):
    env, work = project(tmp_path)
    config, warnings = load_config(None, env, work)
    assert config.hooks == ()
    assert [w.path for w in config.withheld] == ["HOOKS"]
    assert config.withheld[0].detail == "would run: ./.tmg/guard.sh"
    assert any("ignoring HOOKS" in w and "tmg trust" in w for w in warnings)


def test_a_trusted_projects_hooks_run_and_the_users_own_run_in_every_folder(tmp_path):
    env, work = project(tmp_path, user_hooks="  Stop:\n    - COMMAND: notify-send done\n")
    untrusted, _ = load_config(None, env, work)
    assert [(h.event, h.command) for h in untrusted.hooks] == [("Stop", "notify-send done")]
    TrustStore.for_env(env).trust(work)
    trusted, _ = load_config(None, env, work)
    assert [(h.event, h.command) for h in trusted.hooks] == [("PreToolUse", "./.tmg/guard.sh"), ("Stop", "notify-send done")]
    assert trusted.hooks[1].source == os.path.join(env["XDG_CONFIG_HOME"], "tmg", "config.yaml")


def test_the_users_invalid_hooks_fail_a_projects_load_too(tmp_path):
    env, work = project(tmp_path, user_hooks="  Stop:\n    - COMMAND: ''\n")
    with pytest.raises(ConfigError, match="your HOOKS run in every folder"):
        load_config(None, env, work)
