"""Command hooks through the real tmg: real hook scripts, run by tmg at its events, against the
mock. A PreToolUse hook blocks a tool call (the model reads the reason; the command never runs),
a rewrite is judged by the permission engine again, UserPromptSubmit and PostToolUse add context,
a hook that times out is said (stderr and transcript) and the turn goes on, and a project's hooks
run only once its folder is trusted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from e2e.conftest import Result, tmg_command
from e2e.mock_llm import Text, ToolCall

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def hook(tmg, name: str, body: str) -> Path:
    path = tmg.root / "hooks" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def hooks_config(*entries: tuple[str, str, Path, float | None]) -> str:
    """HOOKS as Claude Code's settings.json has them, in YAML: (event, matcher, script, timeout)."""
    text = "HOOKS:\n"
    for event, matcher, script, timeout in entries:
        text += f"  {event}:\n    - matcher: '{matcher}'\n      hooks:\n        - type: command\n"
        text += f"          command: {script}\n" + (f"          timeout: {timeout}\n" if timeout else "")
    return text


def tool_message(request) -> str:
    last = request["messages"][-1]
    assert last["role"] == "tool"
    return last["content"]


def test_a_pre_tool_use_hook_blocks_a_call_the_permissions_would_allow(tmg):
    marker = tmg.root / "ran"
    guard = hook(tmg, "guard.sh", 'grep -q "touch" && { echo "no touching files in this repo" >&2; exit 2; }\nexit 0\n')
    tmg.write_config(hooks_config(("PreToolUse", "shell", guard, None)))
    tmg.llm.enqueue(ToolCall("shell", {"command": f"touch {marker}"}), Text("understood"))
    result = tmg.run("--permissions", "yolo", "make the file")  # yolo: only the hook stands in the way
    assert result.code == 0, result.err
    assert not marker.exists()
    assert tool_message(tmg.llm.requests[1]) == "error: blocked by a hook: no touching files in this repo"
    assert "hooks: PreToolUse blocked shell: no touching files in this repo" in result.err


def test_a_rewritten_call_goes_through_the_permission_engine_again(tmg):
    marker = tmg.root / "ran"
    rewrite = hook(tmg, "rewrite.sh", "cat >/dev/null\n"
                   f"echo '{{\"hookSpecificOutput\": {{\"updatedInput\": {{\"command\": \"touch {marker}\"}}}}}}'\n")
    tmg.write_config(hooks_config(("PreToolUse", "shell", rewrite, None))
                     + "PERMISSIONS:\n  ALLOW: ['shell(echo)']\n")
    tmg.llm.enqueue(ToolCall("shell", {"command": "echo hi"}), Text("ok"))
    result = tmg.run("say hi")
    assert result.code == 1, result.err  # the rewritten call was refused: a one-shot with a refusal exits 1
    assert not marker.exists()  # `echo` was allowed; the rewrite, `touch`, is not
    content = tool_message(tmg.llm.requests[1])
    assert content.startswith("refused:") and f"touch {marker}" in content


def test_hooks_add_context_for_the_model(tmg):
    submit = hook(tmg, "submit.sh", 'cat >/dev/null; echo "The ticket is ABC-123."\n')
    post = hook(tmg, "post.sh", "cat >/dev/null\n"
                'echo \'{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint: clean"}}\'\n')
    tmg.write_config(hooks_config(("UserPromptSubmit", "", submit, None), ("PostToolUse", "list_folder", post, None)))
    tmg.llm.enqueue(ToolCall("list_folder", {"path": "."}), Text("done"))
    result = tmg.run("fix the bug")
    assert result.code == 0, result.err
    prompt = tmg.llm.requests[0]["messages"][-1]["content"]
    assert prompt.startswith("fix the bug") and "[context from a UserPromptSubmit hook]\nThe ticket is ABC-123." in prompt
    assert tool_message(tmg.llm.requests[1]).endswith("[context from a PostToolUse hook]\nlint: clean")


def test_a_hook_that_times_out_is_said_and_the_turn_goes_on(tmg):
    slow = hook(tmg, "slow.sh", "sleep 60\n")
    tmg.write_config(hooks_config(("PreToolUse", "*", slow, 1)))
    tmg.llm.enqueue(ToolCall("list_folder", {"path": "."}), Text("listed"))
    result = tmg.run("list it")
    assert result.code == 0, result.err
    assert result.out.strip() == "listed"
    (line,) = [x for x in result.err.splitlines() if "did not finish" in x]
    assert "PreToolUse hook" in line and "within 1 s (its TIMEOUT), so it was stopped" in line
    transcript = (tmg.session_dirs()[0] / "transcript.md").read_text()
    assert "did not finish within 1 s" in transcript
    assert "error" not in tool_message(tmg.llm.requests[1])  # the call ran


def test_a_projects_hooks_run_only_once_its_folder_is_trusted(tmg):
    marker = tmg.root / "hook-ran"
    user = tmg.root / "xdg" / "tmg" / "config.yaml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(tmg.config.read_text())
    leave = hook(tmg, "leave.sh", f"touch {marker}\n")
    # The project's provider is the mock too (withheld until trusted, then the user's stands in).
    (tmg.work / "tmg.yaml").write_text(tmg.config.read_text() + hooks_config(("UserPromptSubmit", "", leave, None)))
    env = tmg.env()
    del env["TMG_CONFIG"]  # ./tmg.yaml is the config

    def run(*args: str) -> Result:
        proc = subprocess.run(tmg_command() + list(args), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60, cwd=tmg.work, env=env)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    tmg.llm.enqueue(Text("one"), Text("two"))
    first = run("hi")
    assert first.code == 0, first.err
    assert not marker.exists()
    (line,) = [x for x in first.err.splitlines() if "tmg trust" in x]
    assert "HOOKS" in line
    assert run("trust").code == 0
    assert run("hi again").code == 0 and marker.exists()
