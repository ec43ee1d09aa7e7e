"""The shell tool's OS sandbox, with the real bubblewrap: what a command may write, read and reach,
what it is told when the sandbox stopped it, and how one command runs outside it."""

from __future__ import annotations

import asyncio
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from tests.support.sandbox import require_bubblewrap
from tmg.config.loader import parse_config
from tmg.permissions.engine import PermissionEngine
from tmg.tools import sandbox as sandbox_module
from tmg.tools.sandbox import Availability, Sandbox
from tmg.tools.shell import ShellTool


@pytest.fixture(autouse=True)
def _bubblewrap():
    require_bubblewrap()


class Folder:
    """A working folder and a HOME (with a ~/.gitconfig) beside it, and a shell tool over them."""

    def __init__(self, root: Path, work: Path | None = None, **sandbox) -> None:
        self.home = root / "home"
        self.home.mkdir(exist_ok=True)
        (self.home / ".gitconfig").write_text("[user]\n\tname = Sandboxed\n\temail = s@example.com\n")
        self.work = work or root / "work"
        self.work.mkdir(exist_ok=True)
        self.env = {"PATH": os.environ["PATH"], "HOME": str(self.home), "LANG": "C.UTF-8"}
        self.config = parse_config({"SANDBOX": sandbox} if sandbox else {}, {}, None)[0]
        self.warnings: list[str] = []
        self.sandbox = Sandbox(self.work, self.env, lambda: self.config, self.warnings.append)
        self.tool = ShellTool(self.work, self.env, sandbox=self.sandbox)

    def run(self, command: str, **arguments) -> str:
        return asyncio.run(self.tool.run({"command": command, **arguments})).content


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def test_a_command_writes_in_the_working_folder_and_not_outside_it(tmp_path):
    f = Folder(tmp_path)
    out = f.run(f"echo made > made.txt && echo hi > {f.home}/notes.txt")
    assert (f.work / "made.txt").read_text() == "made\n"
    assert not (f.home / "notes.txt").exists()
    assert "Read-only file system" in out
    note = out[out.index("[sandbox]"):]
    assert f"{f.home}/notes.txt" in note and f"only {f.work}" in note and "\"unsandboxed\": true" in note
    assert "SANDBOX.WRITABLE" in note
    assert "[sandbox]" not in f.run("echo fine")  # nothing to explain, nothing said


def test_tmp_is_private_and_home_is_readable(tmp_path):
    f = Folder(tmp_path)
    mine = Path("/tmp") / f"tmg-host-{uuid.uuid4().hex}"
    mine.write_text("host")
    try:
        out = f.run(f"echo inside > /tmp/scratch && cat /tmp/scratch; cat {mine}; cat ~/.gitconfig")
    finally:
        mine.unlink()
    assert "inside" in out and "No such file" in out and "name = Sandboxed" in out
    assert not Path("/tmp/scratch").exists() or Path("/tmp/scratch").read_text() != "inside\n"


def test_git_commit_works_and_its_hooks_and_config_stay_read_only(tmp_path):
    f = Folder(tmp_path)
    git("init", "-q", cwd=f.work)
    (f.work / "a.txt").write_text("a\n")
    out = f.run("git add a.txt && git commit -qm first && git log --format=%an:%s && "
                "echo 'rm -rf ~' > .git/hooks/pre-commit")
    assert "Sandboxed:first" in out  # ~/.gitconfig was read, the commit was written
    assert git("log", "--format=%s", cwd=f.work).strip() == "first"
    assert not (f.work / ".git" / "hooks" / "pre-commit").exists()
    assert "keeps read-only" in out and ".git/hooks/pre-commit" in out
    before = (f.work / ".git" / "config").read_text()
    f.run("git config core.hooksPath /tmp/evil")
    assert (f.work / ".git" / "config").read_text() == before


def test_a_worktree_commits_into_its_repository_but_does_not_write_the_rest_of_it(tmp_path):
    repo = tmp_path / "home" / "repo"  # in HOME: read-only in the sandbox (the rest of /tmp is private)
    repo.mkdir(parents=True)
    git("init", "-q", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "root", cwd=repo)
    git("worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"), cwd=repo)
    f = Folder(tmp_path, work=tmp_path / "wt")
    out = f.run(f"echo x > b.txt && git add b.txt && git commit -qm second && echo y > {repo}/stray.txt")
    assert git("log", "--format=%s", "side", cwd=repo).split() == ["second", "root"], out
    assert not (repo / "stray.txt").exists() and "Read-only file system" in out


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello from the host")

    def log_message(self, *_args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


def _fetch(url: str) -> str:
    return f"{sys.executable} -c \"import urllib.request; print(urllib.request.urlopen('{url}', timeout=5).read().decode())\""


def test_no_network_even_to_a_server_on_localhost_unless_allowed(tmp_path, server):
    blocked = Folder(tmp_path).run(_fetch(server))
    assert "hello from the host" not in blocked and "Connection refused" in blocked
    assert "it has no network" in blocked and "SANDBOX.NETWORK: true" in blocked
    allowed = Folder(tmp_path, NETWORK=True).run(_fetch(server))
    assert "hello from the host" in allowed and "[sandbox]" not in allowed


def test_writable_adds_folders_and_a_missing_one_is_said_once(tmp_path):
    (tmp_path / "home" / "data").mkdir(parents=True)
    f = Folder(tmp_path, WRITABLE=["~/data", "~/nowhere"])
    f.run("echo 1 > ~/data/x")
    f.run("echo 2 >> ~/data/x")
    assert (f.home / "data" / "x").read_text() == "1\n2\n"
    assert f.warnings == [f"SANDBOX.WRITABLE names {f.home / 'nowhere'}, which does not exist; it is left out "
                          "of the sandbox"]


def test_off_runs_commands_as_the_user(tmp_path):
    f = Folder(tmp_path, MODE="off")
    out = f.run(f"echo hi > {f.home}/notes.txt")
    assert (f.home / "notes.txt").exists() and "[sandbox]" not in out


def _without_bubblewrap(f: Folder) -> None:
    f.sandbox = Sandbox(f.work, f.env, lambda: f.config, f.warnings.append,
                        probe=lambda _env: Availability(False, "bubblewrap (bwrap) is not installed; install it"))
    f.tool = ShellTool(f.work, f.env, sandbox=f.sandbox)


def test_auto_where_bubblewrap_cannot_work_runs_the_command_and_says_so_once(tmp_path):
    f = Folder(tmp_path)
    _without_bubblewrap(f)
    f.run(f"touch {f.home}/a")
    f.run(f"touch {f.home}/b")
    assert (f.home / "a").exists() and (f.home / "b").exists()
    assert f.warnings == ["shell commands run without the OS sandbox: bubblewrap (bwrap) is not installed; install "
                          "it (SANDBOX.MODE: off stops this line)"]


def test_on_where_bubblewrap_cannot_work_refuses_every_command(tmp_path):
    f = Folder(tmp_path, MODE="on")
    _without_bubblewrap(f)
    out = f.run(f"touch {f.home}/a")
    assert not (f.home / "a").exists()
    assert out.startswith("error: the OS sandbox is required (SANDBOX.MODE: on) but cannot work here: bubblewrap")
    f.run("true")
    assert len(f.warnings) == 1 and f.warnings[0].startswith("SANDBOX.MODE is on, but bubblewrap (bwrap) is not")


def test_unsandboxed_runs_outside_only_the_call_the_engine_was_told_about(tmp_path):
    f = Folder(tmp_path)
    arguments = {"command": f"touch {f.home}/outside", "unsandboxed": True}
    action = f.tool.action(arguments)
    assert action.outside_sandbox and action.preview == f"[outside the sandbox] touch {f.home}/outside"
    asyncio.run(f.tool.run(arguments))
    assert (f.home / "outside").exists()
    undescribed = asyncio.run(f.tool.run({"command": f"touch {f.home}/again", "unsandboxed": True})).content
    assert not (f.home / "again").exists() and "Read-only file system" in undescribed
    off = Folder(tmp_path, MODE="off")
    assert not off.tool.action({"command": "true", "unsandboxed": True}).outside_sandbox  # nothing to leave


def test_the_engine_asks_every_time_for_a_command_outside_the_sandbox(tmp_path):
    f = Folder(tmp_path)
    action = f.tool.action({"command": "touch x", "unsandboxed": True})

    def engine(mode: str, **permissions) -> PermissionEngine:
        config = parse_config({"PERMISSIONS": {"MODE": mode, **permissions}}, {}, None)[0]
        return PermissionEngine(lambda: config, cwd=str(f.work), env=f.env)

    for mode in ("default", "accept-edits", "yolo"):
        judged = engine(mode, ALLOW=["shell", "shell(touch)"]).judge(action)
        assert judged.decision == "ask" and judged.proposals == ()  # no rule, no "always"
        assert "OUTSIDE the OS sandbox" in judged.reason
    assert engine("read-only").judge(action).decision == "deny"
    assert engine("default", DENY=["shell(touch)"]).judge(action).decision == "deny"
    refused: list[str] = []
    one_shot = engine("yolo")
    one_shot._refused = refused.append
    verdict = asyncio.run(one_shot.check(action))
    assert not verdict.allowed and len(refused) == 1 and "SANDBOX.WRITABLE" in refused[0]


def _running(marker: str) -> list[str]:
    """The processes whose name is ``marker`` (`exec -a`), zombies aside."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if (proc / "cmdline").read_bytes().startswith(marker.encode()):
                if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    found.append(proc.name)
        except OSError:
            continue
    return found


async def _gone(marker: str) -> bool:
    for _ in range(500):  # the kill is sent at once; the kernel may take a moment to deliver it
        if not _running(marker):
            return True
        await asyncio.sleep(0.01)
    return False


def test_a_timeout_or_a_cancel_kills_everything_the_command_started(tmp_path):
    f = Folder(tmp_path)
    marker = f"tmg-sandbox-{uuid.uuid4().hex}"

    async def started(command: str, count: int, **arguments) -> asyncio.Future:
        task = asyncio.ensure_future(f.tool.run({"command": command, **arguments}))
        for _ in range(500):
            await asyncio.sleep(0.01)
            if len(_running(marker)) == count:
                return task
        raise AssertionError(f"{command} never started")

    async def timed_out() -> bool:
        # One of them in a session of its own: outside the group, it dies with the pid namespace.
        task = await started(f"(exec -a {marker} sleep 60) & setsid bash -c 'exec -a {marker} sleep 60' & wait",
                             2, timeout=2)
        assert (await task).content.startswith("timed out after 2 s")
        return await _gone(marker)

    async def cancelled() -> bool:
        task = await started(f"exec -a {marker} sleep 60", 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await _gone(marker)

    assert asyncio.run(timed_out())
    assert asyncio.run(cancelled())


def test_an_unprivileged_user_gets_the_same_sandbox(tmp_path, monkeypatch):
    """Users run tmg as themselves: bubblewrap then needs user namespaces. As root, the sandbox a
    user would get is run as nobody; as anyone else, the other tests already are that user."""
    if os.geteuid() != 0:
        f = Folder(tmp_path)
        assert "--unshare-user" not in f.sandbox.confine().prefix
        f.run(f"touch ok; touch {f.home}/no")
        assert (f.work / "ok").exists() and not (f.home / "no").exists()
        return
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is needed to run the sandbox as another user")
    monkeypatch.setattr(sandbox_module.os, "geteuid", lambda: 65534)
    base = Path("/var/tmp") / f"tmg-nobody-{uuid.uuid4().hex}"  # nobody may not enter pytest's 0700 tmp
    outside = base / "outside"  # nobody may write it, outside the sandbox
    outside.mkdir(parents=True)
    try:
        f = Folder(base)
        for path in (base, f.work, f.home, outside):
            os.chown(path, 65534, 65534)
        prefix = f.sandbox.confine().prefix
        assert "--unshare-user" not in prefix
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *prefix, "bash", "-c",
                               f"id -u; touch {f.work}/mine; touch {outside}/theirs"],
                              capture_output=True, text=True, env=f.env, cwd=f.work, timeout=30)
        assert done.stdout.split() == ["65534"], done.stderr
        assert (f.work / "mine").exists() and not (outside / "theirs").exists()
        assert "Read-only file system" in done.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_sandbox_block_is_validated_and_read_at_each_command(tmp_path):
    from tmg.errors import ConfigError

    for raw, said in (({"SANDBOX": {"MODE": "always"}}, "SANDBOX.MODE is 'always'; use one of: auto, on, off"),
                      ({"SANDBOX": False}, "SANDBOX must be a mapping of KEY: value, not a boolean (e.g. SANDBOX: "
                                           "{MODE: off})"),
                      ({"SANDBOX": {"NETWORK": "yes"}}, "SANDBOX.NETWORK must be true or false")):
        with pytest.raises(ConfigError, match=re.escape(said)):
            parse_config(raw, {}, None)
    f = Folder(tmp_path)
    f.run(f"touch {f.home}/a")
    f.config = parse_config({"SANDBOX": {"MODE": "off"}}, {}, None)[0]  # a hot reload: the next command sees it
    f.run(f"touch {f.home}/b")
    assert not (f.home / "a").exists() and (f.home / "b").exists()
