"""The table of hostile command lines (hostile_lines.yaml): each line's verdict under every rule
set and in every mode (plan judged as read-only), judged by the real engine over a real folder (a real symlink, a real
~/.ssh, saved decisions in a real permissions.json)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tmg.config.model import Config, PermissionsConfig
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import MODES, PermissionEngine
from tmg.permissions.store import DecisionStore

TABLE = yaml.safe_load((Path(__file__).parent / "hostile_lines.yaml").read_text())
LETTER = {"allow": "A", "ask": "Q", "deny": "D"}
COLUMNS = ("default", "accept-edits", "read-only", "yolo")  # the table's letters; plan mode is read-only's


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    work, ssh = root / "work", root / "home" / ".ssh"
    work.mkdir()
    ssh.mkdir(parents=True)
    for name in ("notes.txt", "README.md", "app.toml", ".env"):
        (work / name).write_text("x\n")
    for name in ("id_rsa", "config"):
        (ssh / name).write_text("key\n")
    os.symlink(ssh / "id_rsa", work / "link.txt")
    env = {"HOME": str(root / "home"), "XDG_CONFIG_HOME": str(root / "xdg"), "TMG_HOME": str(root / "tmg-home")}
    built = {}
    for name, rules in TABLE["rulesets"].items():
        store = DecisionStore(root / "xdg" / "tmg" / f"{name}.json")
        for rule in rules.get("saved", ()):
            store.add(rule, str(work))
        for mode in MODES:
            config = Config(permissions=PermissionsConfig(mode, tuple(rules.get("allow", ())),
                                                          tuple(rules.get("ask", ())), tuple(rules.get("deny", ()))))
            built[name, mode] = PermissionEngine(lambda c=config: c, cwd=str(work), env=env, store=store)
    return built


def test_the_table_is_large_and_every_verdict_is_well_formed():
    assert len(TABLE["lines"]) >= 100
    for case in TABLE["lines"]:
        for key, verdict in case.items():
            if key != "line":
                assert key == "all" or key in TABLE["rulesets"], case
                assert len(verdict) == len(COLUMNS) and set(verdict) <= set("AQD"), case


@pytest.mark.parametrize("case", TABLE["lines"], ids=[c["line"][:60] for c in TABLE["lines"]])
def test_a_hostile_line_gets_its_verdict_under_every_rule_set_and_mode(engines, case):
    action = ToolAction("shell", "run", command=case["line"], preview=case["line"])
    wrong = []
    for ruleset in TABLE["rulesets"]:
        want = case.get(ruleset, case["all"])
        got = "".join(LETTER[engines[ruleset, mode].judge(action).decision] for mode in COLUMNS)
        plan = LETTER[engines[ruleset, "plan"].judge(action).decision]
        if plan != got[2]:
            wrong.append(f"{ruleset}: plan mode {plan}, read-only {got[2]}")
        if got != want:
            wrong.append(f"{ruleset}: want {want}, got {got} "
                         f"({engines[ruleset, 'default'].judge(action).reason})")
    assert not wrong, "\n".join(wrong)
