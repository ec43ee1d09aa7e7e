"""shell: exit code and output, the working folder as cwd, no secrets in its environment, bounded
output, and its whole process group killed on a timeout or a cancel."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tmg.tools.registry import ToolRegistry
from tmg.tools.shell import STDOUT_CAP, ShellTool
from tests.support.gates import ALLOW

BASE = {"PATH": os.environ["PATH"], "HOME": "/home/someone", "LANG": "C.UTF-8"}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has been killed, only not yet reaped


async def _wait_for_file(path: Path) -> int:
    for _ in range(2000):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never written")


async def test_exit_code_stdout_and_stderr_in_the_working_folder(tmp_path):
    result = await ShellTool(tmp_path, BASE).run({"command": "pwd; echo oops >&2; exit 3"})
    assert result.content == f"exit code: 3\nstdout:\n{tmp_path}\nstderr:\noops"
    assert (await ShellTool(tmp_path, BASE).run({"command": "true"})).content == "exit code: 0\n(no output)"


async def test_the_environment_holds_no_provider_keys_nor_config_secrets(tmp_path):
    env = {**BASE, "OPENAI_API_KEY": "sk-live-123456789", "TMG_HOME": "/x", "AWS_SECRET_ACCESS_KEY": "abc",
           "TZ": "token-in-a-strange-place-1234"}
    tool = ShellTool(tmp_path, env, secret=lambda value: "token-in-a-strange-place" in value)
    out = (await tool.run({"command": "env"})).content
    assert "HOME=/home/someone" in out and "PATH=" in out
    for leaked in ("OPENAI_API_KEY", "sk-live", "TMG_HOME", "AWS_SECRET", "token-in-a-strange-place"):
        assert leaked not in out
    assert (await tool.run({"command": "cat; echo end"})).content == "exit code: 0\nstdout:\nend"  # stdin is empty


async def test_big_output_keeps_its_head_and_tail_and_says_how_to_get_the_rest(tmp_path):
    result = await ShellTool(tmp_path, BASE).run({"command": "echo FIRST; seq 1 100000; echo LAST"})
    lines = result.content.splitlines()
    assert lines[:3] == ["exit code: 0", "stdout:", "FIRST"] and lines[-1] == "LAST"
    assert "bytes cut from the middle; redirect the output to a file and read it with read_file" in result.content
    assert len(result.content) < STDOUT_CAP + 400
    binary = await ShellTool(tmp_path, BASE).run({"command": "printf 'a\\000b'"})
    assert binary.content == "exit code: 0\nstdout:\n[binary output, 3 bytes; redirect it to a file instead]"


async def test_a_timeout_kills_the_whole_process_group_and_keeps_the_output(tmp_path):
    pidfile = tmp_path / "pid"
    result = await ShellTool(tmp_path, BASE).run(
        {"command": f"echo started; sleep 300 & echo $! > {pidfile}; wait", "timeout": 1})
    assert result.is_error and result.content == "timed out after 1 s; the command was killed\nstdout:\nstarted"
    assert not _alive(int(pidfile.read_text()))


async def test_a_cancel_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "pid"
    task = asyncio.ensure_future(ShellTool(tmp_path, BASE).run({"command": f"sleep 300 & echo $! > {pidfile}; wait"}))
    pid = await _wait_for_file(pidfile)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    for _ in range(500):  # the kill is sent at once; the kernel may take a moment to deliver it
        if not _alive(pid):
            break
        await asyncio.sleep(0.01)
    assert not _alive(pid)


async def test_the_registry_lets_a_longer_timeout_asked_by_the_model_run(tmp_path):
    registry = ToolRegistry([ShellTool(tmp_path, BASE, default_timeout=lambda: 0.2)], gate=ALLOW)
    result = await registry.call("shell", '{"command": "sleep 1; echo done", "timeout": 60}', timeout=0.2)
    assert result.content == "exit code: 0\nstdout:\ndone"
    short = await registry.call("shell", '{"command": "sleep 30"}', timeout=0.2)
    assert short.content.startswith("timed out after 0.2 s")


def test_a_call_is_described_as_running_its_command(tmp_path):
    action = ShellTool(tmp_path, BASE).action({"command": "git status && rm -rf y"})
    assert (action.tool, action.effect, action.command, action.preview) == (
        "shell", "run", "git status && rm -rf y", "git status && rm -rf y")


async def test_a_background_job_holding_the_output_does_not_keep_the_call_waiting(tmp_path):
    pidfile = tmp_path / "pid"
    result = await ShellTool(tmp_path, BASE).run(
        {"command": f"sleep 300 & echo $! > {pidfile}; echo started it", "timeout": 60})
    try:
        assert result.content == "exit code: 0\nstdout:\nstarted it" and not result.is_error
    finally:
        os.kill(int(pidfile.read_text()), 9)
