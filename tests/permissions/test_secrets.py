"""Secret files are secret to every tool: a shell command that names one (in an argument, a
redirection, code it runs, a loop's list) asks like read_file does, and the question names the
file and why; only a rule naming that very command allows it."""

from __future__ import annotations

import os

import pytest

from tmg.config.model import Config, PermissionsConfig
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import PermissionEngine


@pytest.fixture
def rig(tmp_path):
    work, ssh = tmp_path / "work", tmp_path / "home" / ".ssh"
    work.mkdir()
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("key")
    (work / ".env").write_text("TOKEN=1")
    os.symlink(ssh / "id_ed25519", work / "notes.txt")
    return tmp_path


def judge(root, line: str, allow=("shell(cat)", "shell(cp)", "shell(python3)"), source=None):
    config = Config(permissions=PermissionsConfig("default", tuple(allow)), source=source)
    engine = PermissionEngine(lambda: config, cwd=str(root / "work"), env={"HOME": str(root / "home")})
    return engine.judge(ToolAction("shell", "run", command=line))


@pytest.mark.parametrize("line, named, why", [
    ("cat ~/.ssh/id_ed25519", "home/.ssh/id_ed25519", "looks like key material"),
    ("cat notes.txt", "home/.ssh/id_ed25519", "looks like key material"),  # a symlink is what it points to
    ("cat .env", "work/.env", ".env files hold secrets"),
    ("cp .env /tmp/out", "work/.env", ".env files hold secrets"),
    ("cat < .env", "work/.env", ".env files hold secrets"),
    ("python3 -c \"print(open('.env').read())\"", "work/.env", ".env files hold secrets"),
    ("cd ~/.ssh && cat known_hosts", "home/.ssh", "~/.ssh holds credentials"),
])
def test_a_command_naming_a_secret_asks_past_a_rule_for_its_program_and_says_which_and_why(rig, line, named, why):
    judged = judge(rig, line)
    assert judged.decision == "ask", judged
    assert str(rig / named) in judged.reason and why in judged.reason
    if line == "cat notes.txt":
        assert f"{rig}/work/notes.txt (a link to {rig}/home/.ssh/id_ed25519)" in judged.reason


def test_a_rule_naming_the_whole_command_allows_it(rig):
    assert judge(rig, "cat .env", allow=["shell(cat .env)"]).decision == "allow"
    assert judge(rig, "cat .env", allow=["shell(cat *)"]).decision == "ask"  # `*` does not reach secrets


def test_the_config_in_use_holds_provider_keys_whatever_its_path(rig):
    config = rig / "work" / "settings.yaml"
    config.write_text("PROVIDERS: {}")
    judged = judge(rig, "cat settings.yaml", source=config)
    assert judged.decision == "ask" and "tmg's config file (provider keys)" in judged.reason
    assert judge(rig, "cat settings.yaml").decision == "allow"  # not the config: an ordinary file
