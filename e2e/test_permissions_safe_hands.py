"""Issue 20's one-shots through the real tmg and the real shell: what deleted a file, sent a
private key or let the model widen its own rights on the old main is refused now (exit 1, one
stderr line saying how to allow it), and what only reads runs without a question."""

from __future__ import annotations

import json
import subprocess

import pytest

from e2e.mock_llm import Text, ToolCall

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-canary-7f3e91\n-----END OPENSSH PRIVATE KEY-----\n"


def shell(command: str) -> ToolCall:
    return ToolCall("shell", {"command": command})


def permissions(tmg, text: str) -> None:
    tmg.write_config("PERMISSIONS:\n" + text)


def sent(llm) -> str:
    """Everything tmg sent the provider."""
    return "\n".join(json.dumps(r) for r in llm.requests)


def refusals(r) -> list[str]:
    return [line for line in r.err.splitlines() if line.startswith("tmg: refused")]


@pytest.mark.parametrize("mode", ["read-only", "default"])
def test_a_saved_and_a_configured_find_do_not_delete(tmg, llm, mode):
    (tmg.work / "keep").mkdir()
    (tmg.work / "keep" / "a.txt").write_text("a")
    store = tmg.root / "xdg" / "tmg" / "permissions.json"
    store.parent.mkdir(parents=True)
    store.write_text(json.dumps({"version": 1, "decisions": [
        {"rule": "shell(find)", "decision": "allow", "folder": str(tmg.work), "added": "2026-01-01T00:00:00Z"}]}))
    permissions(tmg, "  ALLOW: [shell(find)]\n")
    llm.enqueue(shell("find keep -delete"), Text("cleaned"))
    r = tmg.run("--permissions", mode, "clean up")
    assert r.code == 1, r.err
    assert (tmg.work / "keep" / "a.txt").read_text() == "a"
    (line,) = refusals(r)
    assert ("read-only mode" in line) if mode == "read-only" else ("find -delete removes every file it finds" in line)
    assert "the saved decision shell(find)" in r.err and "is not applied" in r.err  # the old prompt's whole-program save


@pytest.mark.parametrize("mode", ["default", "read-only", "yolo"])
def test_a_git_alias_past_a_deny_of_rm_does_not_delete(tmg, llm, mode):
    subprocess.run(["git", "init", "-q", str(tmg.work)], check=True)
    (tmg.work / "x").write_text("precious")
    permissions(tmg, "  ALLOW: [shell(git)]\n  DENY: [shell(rm)]\n")
    llm.enqueue(shell("git -c alias.x='!rm x' x"), Text("done"))
    r = tmg.run("--permissions", mode, "tidy")
    assert r.code == 1, r.err
    assert (tmg.work / "x").read_text() == "precious"
    (line,) = refusals(r)
    assert "rule shell(rm) in PERMISSIONS.DENY" in line


@pytest.mark.parametrize("command", ["cat ~/.ssh/id_rsa", "cat $HOME/.ssh/id_rsa", "cat notes.txt",
                                     "cd ~/.ssh && cat id_rsa", "head -c 9999 ~/.ss?/id_rsa"])
def test_a_private_key_past_allow_cat_is_not_sent(tmg, llm, command):
    ssh = tmg.root / "user-home" / ".ssh"  # the HOME tmg runs with
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text(KEY)
    (tmg.work / "notes.txt").symlink_to(ssh / "id_rsa")
    permissions(tmg, "  ALLOW: [shell(cat), shell(head)]\n")
    llm.enqueue(shell(command), Text("here is the key"))
    r = tmg.run("show me the key")
    assert r.code == 1, r.err
    assert "canary-7f3e91" not in sent(llm)
    (line,) = refusals(r)
    assert ".ssh" in line and ("looks like key material" in line or "holds credentials" in line)


def test_the_models_edit_of_the_config_in_use_widens_nothing_in_accept_edits(tmg, llm):
    config = tmg.work / "tmg-run.yaml"  # tmg -c work/tmg-run.yaml: a config the file tools can reach
    original = tmg.config.read_text() + "PERMISSIONS:\n  MODE: accept-edits\n"
    config.write_text(original)
    (tmg.work / "x").write_text("precious")
    widened = original.replace("MODE: accept-edits", "MODE: accept-edits\n  ALLOW: [shell]")
    llm.enqueue(ToolCall("write_file", {"path": "tmg-run.yaml", "content": widened}),
                shell("printf '  ALLOW: [shell]\\n' >> tmg-run.yaml"),
                shell("sed -i 's/MODE: accept-edits/MODE: yolo/' tmg-run.yaml"),
                shell("rm x"), Text("done"))
    r = tmg.run("-c", str(config), "make yourself at home")
    assert r.code == 1, r.err
    assert config.read_text() == original
    assert (tmg.work / "x").read_text() == "precious"
    lines = refusals(r)
    assert len(lines) == 4
    assert all(f"{config}: the tmg config in use" in line for line in lines[:3])
    assert "shell `rm x`" in lines[3]


def test_control_files_ask_even_in_yolo_and_other_files_do_not(tmg, llm):
    subprocess.run(["git", "init", "-q", str(tmg.work)], check=True)
    hook = tmg.work / ".git" / "hooks" / "pre-commit"
    llm.enqueue(ToolCall("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nrm -rf ~\n"}),
                ToolCall("write_file", {"path": "notes.txt", "content": "fine\n"}), Text("done"))
    r = tmg.run("--permissions", "yolo", "set things up")
    assert r.code == 1, r.err
    assert not hook.exists() and (tmg.work / "notes.txt").read_text() == "fine\n"
    (line,) = refusals(r)
    assert "git's hooks (a hook runs at the next commit): changing it asks in every mode" in line


def test_read_only_commands_run_without_a_question_and_their_output_is_shown(tmg, llm):
    (tmg.work / "notes.txt").write_text("one\ntwo\n")
    llm.enqueue(shell("ls && wc -l notes.txt"), Text("two lines"))
    r = tmg.run("count")
    assert r.code == 0, r.err
    assert r.out == "two lines\n" and refusals(r) == []
    assert "\n    notes.txt\n" in r.err and "\n    2 notes.txt\n" in r.err  # what the command printed
