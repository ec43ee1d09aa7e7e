"""Command hooks run for real (shell scripts through /bin/sh), read by Claude Code's protocol:
what they are sent, what blocks, rewrites and adds context, and that a failing one is said and
never blocks."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tmg.config.model import Config, HookSpec
from tmg.engine.turn import Turn
from tmg.errors import HookStopError
from tmg.hooks.command_hooks import CommandHooks
from tmg.llm.gateway import Completion, ToolCallRequest, Usage
from tmg.tools.registry import ToolResult

CALL = ToolCallRequest("call_7", "shell", json.dumps({"command": "rm -rf build"}))


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


class Said(list):
    def __call__(self, text: str) -> None:
        self.append(text)


def hooks_for(tmp_path: Path, *specs: HookSpec, resumed: bool = False) -> tuple[CommandHooks, Said]:
    said = Said()
    config = Config(hooks=specs)
    hooks = CommandHooks(lambda: config, session_id="sess-1", transcript_path=tmp_path / "t.md", cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin"}, permission_mode=lambda: "default", resumed=resumed, say=said)
    return hooks, said


def turn(text: str = "") -> Turn:
    t = Turn(1, 1, "q", "sess-1", "default")
    t.completion = Completion(text, [], Usage())
    return t


async def test_pre_tool_use_gets_claude_codes_input_and_exit_2_blocks_with_its_stderr(tmp_path):
    check = script(tmp_path, "check.sh", 'cat > "$0.in"; echo "rm is not allowed here" >&2; exit 2\n')
    hooks, said = hooks_for(tmp_path, HookSpec("PreToolUse", check, "shell"))
    verdict = await hooks.before_tool(CALL, turn())
    assert verdict.blocked == "rm is not allowed here"
    sent = json.loads(Path(check + ".in").read_text())
    assert sent == {"session_id": "sess-1", "transcript_path": str(tmp_path / "t.md"), "cwd": str(tmp_path),
                    "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "shell",
                    "tool_input": {"command": "rm -rf build"}, "tool_use_id": "call_7"}
    assert said == ["hooks: PreToolUse blocked shell: rm is not allowed here"]


async def test_the_matcher_picks_the_tools_a_hook_runs_for(tmp_path):
    check = script(tmp_path, "check.sh", "exit 2\n")
    hooks, _ = hooks_for(tmp_path, HookSpec("PreToolUse", check, "read_file|edit_file"))
    verdict = await hooks.before_tool(CALL, turn())
    assert verdict.blocked is None and verdict.arguments == CALL.arguments


@pytest.mark.parametrize("output", [
    {"decision": "block", "reason": "not on Fridays"},
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                            "permissionDecisionReason": "not on Fridays"}},
])
async def test_json_output_blocks_by_decision_or_permission_decision(tmp_path, output):
    check = script(tmp_path, "check.sh", f"echo '{json.dumps(output)}'\n")
    hooks, _ = hooks_for(tmp_path, HookSpec("PreToolUse", check))
    assert (await hooks.before_tool(CALL, turn())).blocked == "not on Fridays"


async def test_updated_input_rewrites_and_allow_grants_nothing_more(tmp_path):
    out = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "rm -rf build/tmp"},
                                  "additionalContext": "build/ holds the release"}}
    check = script(tmp_path, "check.sh", f"echo '{json.dumps(out)}'\n")
    hooks, said = hooks_for(tmp_path, HookSpec("PreToolUse", check))
    verdict = await hooks.before_tool(CALL, turn())
    assert json.loads(verdict.arguments) == {"command": "rm -rf build/tmp"} and verdict.blocked is None
    assert verdict.context == "[context from a PreToolUse hook]\nbuild/ holds the release"
    assert any("rewrote the arguments of shell" in s for s in said)


async def test_post_tool_use_sees_the_response_and_adds_context(tmp_path):
    post = script(tmp_path, "post.sh", 'cat > "$0.in"; echo \'{"hookSpecificOutput": {"additionalContext": "lint: 2 warnings"}}\'\n')
    hooks, _ = hooks_for(tmp_path, HookSpec("PostToolUse", post, "shell"))
    added = await hooks.after_tool(CALL, CALL.arguments, ToolResult("removed 3 files"), turn())
    assert added == "[context from a PostToolUse hook]\nlint: 2 warnings"
    sent = json.loads(Path(post + ".in").read_text())
    assert sent["hook_event_name"] == "PostToolUse"
    assert sent["tool_response"] == {"content": "removed 3 files", "is_error": False}


@pytest.mark.parametrize("body, failure", [
    ("echo oops >&2; exit 1\n", "it exited with 1: oops"),
    ("echo '{not json'\n", "its output is not valid JSON"),
    ("sleep 30 & sleep 30\n", "it did not finish within 0.3 s (its TIMEOUT), so it was stopped"),
])
async def test_a_failing_hook_is_said_and_never_blocks(tmp_path, body, failure):
    bad = script(tmp_path, "bad.sh", body)
    hooks, said = hooks_for(tmp_path, HookSpec("PreToolUse", bad, timeout=0.3))
    verdict = await hooks.before_tool(CALL, turn())
    assert verdict.blocked is None and verdict.arguments == CALL.arguments
    assert len(said) == 1 and failure in said[0] and said[0].endswith("going on without it")
    assert "hooks: PreToolUse hook `" in said[0]


async def test_hooks_of_one_event_run_side_by_side_and_any_block_blocks(tmp_path):
    ok = script(tmp_path, "ok.sh", "exit 0\n")
    no = script(tmp_path, "no.sh", "echo 'one says no' >&2; exit 2\n")
    hooks, _ = hooks_for(tmp_path, HookSpec("PreToolUse", ok), HookSpec("PreToolUse", no))
    assert (await hooks.before_tool(CALL, turn())).blocked == "one says no"


async def test_continue_false_stops_the_prompt_with_its_reason(tmp_path):
    stop = script(tmp_path, "stop.sh", "echo '{\"continue\": false, \"stopReason\": \"quota spent\"}'\n")
    hooks, said = hooks_for(tmp_path, HookSpec("PostToolUse", stop))
    with pytest.raises(HookStopError, match="stopped by a PostToolUse hook: quota spent"):
        await hooks.after_tool(CALL, CALL.arguments, ToolResult("x"), turn())
    assert said == ["hooks: PostToolUse said to stop: quota spent"]


async def test_session_start_once_then_user_prompt_submit_each_prompt_their_stdout_is_context(tmp_path):
    start = script(tmp_path, "start.sh", 'cat >> "$0.in"; echo "branch: main"\n')
    submit = script(tmp_path, "submit.sh", 'echo "ticket ABC-1"\n')
    hooks, _ = hooks_for(tmp_path, HookSpec("SessionStart", start), HookSpec("UserPromptSubmit", submit), resumed=True)
    first = await hooks.before_prompt("fix the bug")
    second = await hooks.before_prompt("and the test")
    assert first == "[context from a SessionStart hook]\nbranch: main\n\n[context from a UserPromptSubmit hook]\nticket ABC-1"
    assert second == "[context from a UserPromptSubmit hook]\nticket ABC-1"
    assert json.loads(Path(start + ".in").read_text())["source"] == "resume"


async def test_user_prompt_submit_blocks_the_prompt(tmp_path):
    submit = script(tmp_path, "submit.sh", 'echo "no secrets in prompts" >&2; exit 2\n')
    hooks, _ = hooks_for(tmp_path, HookSpec("UserPromptSubmit", submit))
    with pytest.raises(HookStopError, match="blocked by a UserPromptSubmit hook: no secrets in prompts"):
        await hooks.before_prompt("my password is hunter2")


async def test_stop_asks_to_go_on_and_is_told_when_it_already_did(tmp_path):
    gate = script(tmp_path, "gate.sh", 'cat > "$0.in"; grep -q \'"stop_hook_active": true\' "$0.in" && exit 0; '
                                       'echo "run the tests first" >&2; exit 2\n')
    hooks, _ = hooks_for(tmp_path, HookSpec("Stop", gate))
    assert await hooks.before_stop(turn("done")) == (
        "[a Stop hook asks you to go on before you finish: run the tests first]")
    assert json.loads(Path(gate + ".in").read_text())["last_assistant_message"] == "done"
    assert await hooks.before_stop(turn("really done")) is None  # the same prompt: stop_hook_active


async def test_continue_false_at_stop_only_ends_the_prompt(tmp_path):
    done = script(tmp_path, "done.sh", "echo '{\"continue\": false, \"decision\": \"block\", \"reason\": \"x\"}'\n")
    hooks, _ = hooks_for(tmp_path, HookSpec("Stop", done))
    assert await hooks.before_stop(turn("done")) is None


async def test_session_start_and_pre_compact_cannot_block(tmp_path):
    no = script(tmp_path, "no.sh", "echo 'not now' >&2; exit 2\n")
    hooks, said = hooks_for(tmp_path, HookSpec("SessionStart", no), HookSpec("PreCompact", no, "auto"))
    assert await hooks.before_prompt("q") == ""
    await hooks.before_compact("auto", "")
    assert said == [f"hooks: SessionStart `{no}`: it exited with 2: not now",
                    f"hooks: PreCompact `{no}`: it exited with 2: not now"]


async def test_hooks_are_read_live(tmp_path):
    no = script(tmp_path, "no.sh", "exit 2\n")
    holder = {"config": Config()}
    hooks = CommandHooks(lambda: holder["config"], session_id="s", transcript_path=tmp_path / "t", cwd=tmp_path,
                         env={}, permission_mode=lambda: "default", resumed=False, say=lambda _t: None)
    assert (await hooks.before_tool(CALL, turn())).blocked is None
    holder["config"] = replace(Config(), hooks=(HookSpec("PreToolUse", no),))
    assert (await hooks.before_tool(CALL, turn())).blocked is not None
