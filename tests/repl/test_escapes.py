"""The REPL's `!command`, `@path` and `--resume` picker with real sessions on disk; the shell command
really runs (under the permission engine: a rule allows it, or it is refused)."""

from __future__ import annotations

from tmg.repl import commands
from tmg.session.options import ChatOptions
from tests.repl.harness import Reply, Rig


def users(request) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "user"]


def test_bang_and_its_escape_parse():
    assert commands.parse("!git status") == commands.ShellEscape("git status")
    assert commands.parse("  !  ls -l") == commands.ShellEscape("ls -l")
    assert commands.parse("!!important: read this") == commands.Prompt("!important: read this")
    assert commands.parse("!") == commands.ShellEscape("")


def allow_echo(rig: Rig) -> None:
    rig.config.write_text(rig.config.read_text() + "PERMISSIONS:\n  ALLOW: [shell(echo)]\n  DENY: [shell(rm)]\n")


def test_a_shell_escape_runs_and_its_output_goes_with_the_next_prompt_only(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    allow_echo(rig)
    rig.model.replies += [Reply("seen"), Reply("and again")]
    rig.run("!echo the-marker-0815", "what did it say?", "and now?", "/exit")
    assert "exit code: 0\nstdout:\nthe-marker-0815" in rig.out.getvalue()  # shown to the user
    assert "its output goes with your next prompt" in rig.err.getvalue()
    first, second = rig.model.requests
    assert users(first)[-1].startswith("what did it say?\n\n--- output of `echo the-marker-0815` (a command the "
                                       "user ran with !) ---\nexit code: 0\nstdout:\nthe-marker-0815\n")
    assert users(second)[-1] == "and now?"  # with the next prompt only
    assert "> tool `shell (typed: !)` `echo the-marker-0815`" in rig.transcript()
    assert "you\n\nwhat did it say?\n" in rig.transcript()  # the prompt as typed; the output is material


def test_a_refused_shell_escape_runs_nothing_and_attaches_nothing(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    allow_echo(rig)
    target = tmp_path / "work" / "kept.txt"
    target.write_text("still here")
    rig.model.replies.append(Reply("ok"))
    rig.run("!rm kept.txt", "!", "hello", "/exit")
    assert target.exists()
    err = rig.err.getvalue()
    assert "!rm kept.txt did not run; nothing goes with the next prompt" in err
    assert "give the command after !" in err
    assert users(rig.model.requests[0]) == ["hello"]


def test_at_path_attaches_the_file_in_the_repl(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    (tmp_path / "work" / "plan.md").write_text("step one: tea\n")
    rig.model.replies.append(Reply("tea first"))
    rig.run("what is in @plan.md?", "/exit")
    sent = users(rig.model.requests[0])[-1]
    assert sent.startswith("what is in @plan.md?\n\n--- file @plan.md (") and "step one: tea" in sent
    stored = rig.history()
    assert "step one: tea" in stored[0]["content"]


def test_resume_alone_picks_a_session_of_this_project(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("a"), Reply("b"), Reply("c")]
    rig.run("about tides", "/new", "about stars", "/exit")
    old = rig.opened[0].ref.id
    rig.opened.clear()
    rig.run("2", "and the moon?", "/exit", options=ChatOptions(resume=""))
    assert rig.opened[0].ref.id == old
    assert users(rig.model.requests[-1]) == ["about tides", "and the moon?"]
    err = rig.err.getvalue()
    assert "sessions of this project, the most recent first:" in err and "resume which?" in err


def test_resume_alone_with_nothing_picked_starts_as_usual(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("a"), Reply("b")]
    rig.run("first", "/exit")
    current = rig.opened[0].ref.id
    rig.opened.clear()
    rig.run("no thanks", "hello", "/exit", options=ChatOptions(resume=""))
    assert rig.opened[0].ref.id == current and "no session picked; starting as usual" in rig.err.getvalue()
