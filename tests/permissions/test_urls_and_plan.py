"""The permission engine's URL targets (web_fetch) and plan mode, judged as the registry asks."""

from __future__ import annotations

import pytest

from tmg.config.model import Config, PermissionsConfig
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import PermissionEngine
from tmg.tools.web_fetch import WebFetchTool


def engine(tmp_path, allow=(), ask=(), deny=(), mode=None, config_mode="default") -> PermissionEngine:
    config = Config(permissions=PermissionsConfig(config_mode, tuple(allow), tuple(ask), tuple(deny)))
    return PermissionEngine(lambda: config, cwd=str(tmp_path), mode=mode,
                            env={"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})


def fetch(url: str) -> ToolAction:
    return WebFetchTool(names_url=lambda _u: False, allows=lambda _a: False).action({"url": url})


def test_fetching_asks_by_default_and_always_proposes_the_site(tmp_path):
    judgement = engine(tmp_path).judge(fetch("https://docs.python.org/3/library/os.html"))
    assert judgement.decision == "ask" and judgement.reason == "fetching from the web asks by default"
    assert judgement.proposals == ("web_fetch(docs.python.org/**)",)
    assert "web_fetch(docs.python.org/**) to PERMISSIONS.ALLOW" in judgement.how_to_allow


@pytest.mark.parametrize("url, decision", [
    ("https://docs.python.org/3/library/os.html", "allow"),
    ("http://docs.python.org/", "allow"),
    ("https://docs.python.org.evil.example/3/", "ask"),
    ("https://evil.example/docs.python.org/3/", "ask"),
    ("https://peps.python.org/pep-0008/", "ask"),
])
def test_a_url_rule_covers_its_site_and_nothing_else(tmp_path, url, decision):
    assert engine(tmp_path, allow=["web_fetch(docs.python.org/**)"]).judge(fetch(url)).decision == decision


def test_deny_beats_allow_for_urls(tmp_path):
    rules = engine(tmp_path, allow=["web_fetch"], deny=["web_fetch(*.tracker.example/**)"])
    assert rules.judge(fetch("https://ads.tracker.example/x")).decision == "deny"
    assert rules.judge(fetch("https://docs.example/x")).decision == "allow"


@pytest.mark.parametrize("mode", [None, "yolo", "accept-edits"])
def test_a_private_address_needs_a_rule_naming_it_even_where_fetching_is_allowed(tmp_path, mode):
    url = "http://127.0.0.1:8123/page"
    broad = engine(tmp_path, allow=["web_fetch"], mode=mode).judge(fetch(url))
    assert broad.decision == "ask" and broad.reason == "127.0.0.1 is a loopback address: fetching it asks first"
    assert broad.proposals == ("web_fetch(127.0.0.1:8123/**)",)
    named = engine(tmp_path, allow=["web_fetch(127.0.0.1:8123/**)"], mode=mode)
    assert named.judge(fetch(url)).decision == "allow"
    assert named.rule_names_url("web_fetch", url) and not engine(tmp_path, allow=["web_fetch"]).rule_names_url(
        "web_fetch", url)


@pytest.mark.parametrize("mode", ["read-only", "plan"])
def test_read_only_modes_still_ask_before_a_fetch(tmp_path, mode):
    assert engine(tmp_path, mode=mode).judge(fetch("https://docs.python.org/")).decision == "ask"


def test_plan_mode_allows_reads_and_refuses_writes_and_commands_even_allowed_by_rules(tmp_path):
    gate = engine(tmp_path, mode="plan", allow=["shell(make)", "write_file", "mcp_fs_*"])
    assert gate.judge(ToolAction("read_file", "read", paths=(str(tmp_path / "a.py"),))).decision == "allow"
    for action in (ToolAction("write_file", "write", paths=(str(tmp_path / "a.py"),)),
                   ToolAction("shell", "run", command="make clean"), ToolAction("mcp_fs_move", "unknown")):
        judgement = gate.judge(action)
        assert judgement.decision == "deny" and "plan mode" in judgement.reason, action
        assert "exit_plan_mode" in judgement.how_to_allow and "(--permissions)" in judgement.how_to_allow


def test_set_mode_switches_and_says_what_switched_it(tmp_path):
    records: list[str] = []
    config = Config(permissions=PermissionsConfig("default", (), (), ()))
    gate = PermissionEngine(lambda: config, cwd=str(tmp_path), env={"HOME": str(tmp_path)}, record=records.append)
    gate.set_mode("plan", "/plan")
    assert gate.mode() == "plan" and gate.mode_source() == "/plan"
    gate.set_mode("accept-edits", "the approved plan")
    assert gate.judge(ToolAction("write_file", "write", paths=(str(tmp_path / "x"),))).decision == "allow"
    assert records == ["permission mode plan (/plan)", "permission mode accept-edits (the approved plan)"]
    with pytest.raises(ValueError):
        gate.set_mode("anything", "x")
