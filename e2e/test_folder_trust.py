"""Folder trust (SPEC §3), through the real tmg: a ``./tmg.yaml`` found in the working folder may
not run its MCP servers or send prompts and keys to its own URL until the folder is trusted.

Here the user's own config is the XDG file (pointing at the usual mock API); the project file
points at a second mock and declares a server whose command leaves a marker file. tmg runs with
the project folder as its working folder and without TMG_CONFIG (which would be trusted).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.conftest import API_KEY, Result, tmg_command
from e2e.mock_llm import MockLLM, Text
from e2e.tmux import Terminal, flat, tmux_available

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

REPO = Path(__file__).resolve().parent.parent
ECHO_SERVER = REPO / "tests" / "support" / "echo_mcp_server.py"


@pytest.fixture
def elsewhere():
    """The API the project file points at: nothing may reach it from an untrusted folder."""
    with MockLLM() as mock:
        yield mock


def user_config(tmg) -> None:
    """The user's own config, in the XDG place: the usual mock provider."""
    path = tmg.root / "xdg" / "tmg" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tmg.config.read_text())


def project(folder: Path, marker: Path, elsewhere: MockLLM | None = None) -> Path:
    """A project tmg.yaml: a server that leaves ``marker`` when it runs, and optionally a provider."""
    folder.mkdir(parents=True, exist_ok=True)
    text = (
        "PERSON: You are the project's helper.\n"
        "MCP_SERVERS:\n"
        "  echo:\n"
        "    COMMAND: sh\n"
        f"    ARGS: ['-c', 'touch {marker}; exec {sys.executable} {ECHO_SERVER}']\n"
        "    TIMEOUT: 30\n"
    )
    if elsewhere is not None:
        text += (
            "PROVIDERS:\n"
            "  theirs:\n"
            "    MODEL: openai/their-model\n"
            "    API_KEY: ${MOCK_API_KEY}\n"
            f"    URL: {elsewhere.url}\n"
        )
    (folder / "tmg.yaml").write_text(text)
    return folder


def env(tmg, **extra: str) -> dict[str, str]:
    e = tmg.env(TMG_MCP_WAIT="60", **extra)  # a started server is waited for, never missed by chance
    del e["TMG_CONFIG"]  # the user's config is the XDG file; ./tmg.yaml is the project's
    return e


def run_in(tmg, folder: Path, *args: str) -> Result:
    return tmg.run(*args, env=env(tmg), timeout=90, cwd=folder)


def tool_names(request) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def trust_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "tmg trust" in line]


def test_a_one_shot_in_an_untrusted_folder_answers_without_running_its_server_until_trusted(tmg, llm):
    user_config(tmg)
    marker = tmg.root / "server-ran"
    folder = project(tmg.work, marker, llm)  # its own provider, withheld too: the user's answers
    llm.enqueue(Text("answered without it"), Text("answered with it"))

    r = run_in(tmg, folder, "hi")
    assert r.code == 0, r.err
    assert r.out == "answered without it\n"
    assert not marker.exists()
    (line,) = trust_lines(r.err)  # one line, naming what is ignored and the command
    assert "MCP_SERVERS.echo" in line and "PROVIDERS.theirs" in line and f"tmg trust {os.path.realpath(folder)}" in line
    assert "PERSON" in line and "instruct your model" in line  # its words to the model wait for trust too
    assert not any(n.startswith("mcp_echo_") for n in tool_names(llm.requests[0]))
    assert llm.requests[0]["model"] == "mock-model"  # the user's provider
    assert not llm.requests[0]["messages"][0]["content"].startswith("You are the project's helper.")

    t = run_in(tmg, folder, "trust")
    assert t.code == 0, t.err
    assert os.path.realpath(folder) in t.out

    r = run_in(tmg, folder, "hi again")
    assert r.code == 0, r.err
    assert r.out == "answered with it\n"
    assert marker.exists()
    assert "mcp_echo_echo" in tool_names(llm.requests[1])
    assert llm.requests[1]["model"] == "their-model"
    assert llm.requests[1]["messages"][0]["content"].startswith("You are the project's helper.")
    assert trust_lines(r.err) == []


def test_a_project_url_receives_nothing_until_the_folder_is_trusted(tmg, llm, elsewhere):
    user_config(tmg)
    folder = project(tmg.work, tmg.root / "server-ran", elsewhere)
    llm.enqueue(Text("from the user's provider"))
    elsewhere.enqueue(Text("from the project's provider"))

    r = run_in(tmg, folder, "where does this go?")
    assert r.code == 0, r.err
    assert r.out == "from the user's provider\n"
    assert elsewhere.requests == []
    assert llm.requests[0]["model"] == "mock-model"
    (line,) = trust_lines(r.err)
    assert "PROVIDERS.theirs" in line
    assert API_KEY not in r.err

    assert run_in(tmg, folder, "trust").code == 0
    r = run_in(tmg, folder, "and now?")
    assert r.code == 0, r.err
    assert r.out == "from the project's provider\n"
    assert elsewhere.requests[0]["model"] == "their-model"
    assert len(llm.requests) == 1


def test_without_a_provider_of_the_users_own_the_run_fails_with_one_clear_line(tmg, llm, elsewhere):
    folder = project(tmg.work, tmg.root / "server-ran", elsewhere)  # no user config, no key in the env
    r = run_in(tmg, folder, "hi")
    assert r.code == 1
    assert elsewhere.requests == [] and llm.requests == []
    assert len(trust_lines(r.err)) == 1
    errors = [line for line in r.err.splitlines() if line.startswith("tmg: error:")]
    assert len(errors) == 1 and "API_KEY" in errors[0] and "no local OpenAI-compatible server answered" in errors[0]
    assert "Traceback" not in r.err


def test_trust_through_a_symlink_trusts_the_folder_it_points_to_not_the_link(tmg, llm):
    user_config(tmg)
    marker = tmg.root / "server-ran"
    real = project(tmg.work, marker, llm)
    other = project(tmg.root / "other", marker, llm)
    link = tmg.root / "link"
    link.symlink_to(real)

    t = run_in(tmg, tmg.root, "trust", str(link))
    assert t.code == 0, t.err
    listed = run_in(tmg, tmg.root, "trust", "--list")
    assert listed.out.splitlines() == [os.path.realpath(real)]

    llm.enqueue(Text("one"), Text("two"))
    r = run_in(tmg, link, "through the link")  # the same folder: trusted
    assert r.code == 0, r.err
    assert marker.exists() and trust_lines(r.err) == []
    marker.unlink()

    link.unlink()
    link.symlink_to(other)  # the link now points elsewhere: that folder was never trusted
    r = run_in(tmg, link, "through the re-pointed link")
    assert r.code == 0, r.err
    assert not marker.exists() and len(trust_lines(r.err)) == 1


def test_a_moved_or_replaced_folder_is_not_trusted_and_revoke_and_list_work(tmg, llm):
    user_config(tmg)
    marker = tmg.root / "server-ran"
    first = project(tmg.root / "proj", marker, llm)
    assert run_in(tmg, first, "trust").code == 0

    moved = tmg.root / "moved"
    first.rename(moved)
    replacement = project(tmg.root / "proj", marker, llm)  # a new folder at the trusted path
    llm.enqueue(Text("a"), Text("b"), Text("c"), Text("d"))
    for folder in (moved, replacement):
        r = run_in(tmg, folder, "hi")
        assert r.code == 0, r.err
        assert not marker.exists() and len(trust_lines(r.err)) == 1
    listed = run_in(tmg, tmg.root, "trust", "--list")
    assert str(replacement) in listed.out and "not trusted" in listed.out

    assert run_in(tmg, replacement, "trust").code == 0
    r = run_in(tmg, replacement, "trusted again")
    assert marker.exists() and trust_lines(r.err) == []
    marker.unlink()

    revoked = run_in(tmg, tmg.root, "trust", "--revoke", str(replacement))
    assert revoked.code == 0, revoked.err
    assert run_in(tmg, tmg.root, "trust", "--list").out == "no trusted folders (tmg trust [PATH] adds one)\n"
    r = run_in(tmg, replacement, "revoked")
    assert r.code == 0, r.err
    assert not marker.exists() and len(trust_lines(r.err)) == 1
    again = run_in(tmg, tmg.root, "trust", "--revoke", str(replacement))
    assert again.code == 1 and "was not trusted" in again.err


def test_the_trust_file_is_private(tmg):
    folder = project(tmg.work, tmg.root / "server-ran")
    assert run_in(tmg, folder, "trust").code == 0
    store = tmg.root / "xdg" / "tmg" / "trusted.json"
    assert store.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in store.parent.iterdir()] == ["trusted.json"]  # no temp file left


def test_config_and_doctor_say_the_folder_is_untrusted_and_what_is_ignored(tmg, llm, elsewhere):
    user_config(tmg)
    marker = tmg.root / "server-ran"
    folder = project(tmg.work, marker, elsewhere)
    shown = run_in(tmg, folder, "config")
    assert shown.code == 0, shown.err
    assert "folder NOT trusted" in shown.out
    assert f"MCP_SERVERS.echo: would run: sh -c 'touch {marker};" in shown.out
    assert f"PROVIDERS.theirs: would connect to {elsewhere.url}, sending API_KEY (from ${{MOCK_API_KEY}})" in shown.out
    assert "echo:" not in shown.out.split("MCP_SERVERS:")[-1]  # not in the resolved config

    doctor = run_in(tmg, folder, "doctor")
    assert "warn  trust: ignored MCP_SERVERS.echo" in doctor.out
    assert "warn  trust: ignored PROVIDERS.theirs" in doctor.out
    assert not marker.exists()  # doctor does not start an untrusted server either
    assert elsewhere.requests == []


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_repl_asks_once_showing_the_command_and_trust_applies_it(tmg, llm, elsewhere):
    user_config(tmg)
    marker = tmg.root / "server-ran"
    folder = project(tmg.work, marker, elsewhere)
    elsewhere.enqueue(Text("the project's answer"))
    term = Terminal(width=160, height=40)
    try:
        term.start(tmg_command(), env(tmg, LANG=os.environ.get("LANG") or "C.UTF-8"), folder)
        screen = term.wait_for(r"\[t\] trust")
        assert flat(f"sh -c 'touch {marker};") in flat(screen)  # exactly what it would run, however it wraps
        assert f"would connect to {elsewhere.url}" in screen
        assert not marker.exists()
        term.ask("t")
        term.wait_for(r"^default · openai/their-model >")
        term.wait_for(lambda _s: marker.exists())  # the server is started now that it is trusted
        term.ask("hi")
        term.wait_for(r"the project's answer")
        term.ask("/exit")
        assert term.exit_status() == 0
    finally:
        term.close()
    assert llm.requests == []
    assert run_in(tmg, folder, "trust", "--list").out.splitlines() == [os.path.realpath(folder)]


@pytest.mark.tmux
@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_declining_in_the_repl_runs_without_the_projects_settings(tmg, llm, elsewhere):
    user_config(tmg)
    marker = tmg.root / "server-ran"
    folder = project(tmg.work, marker, elsewhere)
    llm.enqueue(Text("the user's answer"))
    term = Terminal(width=160, height=40)
    try:
        term.start(tmg_command(), env(tmg, LANG=os.environ.get("LANG") or "C.UTF-8"), folder)
        term.wait_for(r"\[t\] trust")
        term.ask("n")
        screen = term.wait_for(r"^default · openai/mock-model >")
        assert "to use them run: tmg trust" in screen
        term.ask("hi")
        term.wait_for(r"the user's answer")
        term.ask("/exit")
        assert term.exit_status() == 0
    finally:
        term.close()
    assert not marker.exists() and elsewhere.requests == []
    assert run_in(tmg, folder, "trust", "--list").out == "no trusted folders (tmg trust [PATH] adds one)\n"


@pytest.mark.parametrize("args", [["-t"], ["--help"], ["trust", "--list"], ["trust"]])
def test_fast_paths_in_an_untrusted_project_folder_import_no_heavy_module(tmg, llm, args):
    import json

    from e2e.test_fast_paths import HEAVY, PROBE

    user_config(tmg)
    folder = project(tmg.work, tmg.root / "server-ran", llm)
    llm.enqueue(Text("an answer"))
    assert run_in(tmg, folder, "a question").code == 0  # so -t has a session to print
    proc = subprocess.run([sys.executable, "-c", PROBE % (HEAVY, args)], capture_output=True, text=True,
                          cwd=folder, env=env(tmg), stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0, proc.stderr
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("IMPORTED=")][-1]
    assert json.loads(line.split("=", 1)[1]) == []
