"""What "yes, always" and "yes for this session" save: the narrowest rule for what the user saw,
never a whole interpreter, executor or destructive program, never one a deny would contradict."""

from __future__ import annotations

import pytest

from tmg.config.model import Config, PermissionsConfig
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import PermissionEngine


@pytest.fixture
def work(tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("x")
    return tmp_path / "work"


def judge(work, line: str, deny=(), allow=()):
    config = Config(permissions=PermissionsConfig("default", tuple(allow), (), tuple(deny)))
    engine = PermissionEngine(lambda: config, cwd=str(work), env={"HOME": str(work.parent / "home")})
    return engine.judge(ToolAction("shell", "run", command=line))


@pytest.mark.parametrize("line, saved", [
    ("rm notes.txt", "shell(rm notes.txt)"),  # a destructive program: exactly its paths
    ("rm -rf build", "shell(rm -rf build)"),
    ("chmod +x run.sh", "shell(chmod +x run.sh)"),
    ("touch a b", "shell(touch a b)"),
    ("npm test", "shell(npm test)"),
    ("git commit -m \"$msg\"", "shell(git commit -m)"),  # up to the word an expansion makes
    ("pytest", "shell(pytest)"),
    ("python3 -m pytest -q", "shell(python3 -m pytest -q)"),
    ("python3 -c 'print(1)'", "shell(python3 -c 'print(1)')"),  # hidden code: only named whole
    ("git -c alias.x='!echo hi' x", "shell(git -c 'alias.x=!echo hi' x)"),
    ("cat .env", "shell(cat .env)"),  # a secret: only the command naming it
])
def test_always_saves_the_command_the_user_saw(work, line, saved):
    judged = judge(work, line)
    assert judged.decision == "ask" and judged.proposals == (saved,)


@pytest.mark.parametrize("line, why", [
    ("rm -rf /elsewhere", "/elsewhere is outside the working folder"),
    ("rm notes.txt ../sibling", "../sibling is outside the working folder"),
    ("rm $f", "rm is saved only with the exact paths it changes"),
    ("rm", "rm is saved only with the exact paths it changes"),
    ("make", "make is never allowed whole"),
    ("python3", "python3 is never allowed whole"),
    ("git", "git is never allowed whole"),
    ("docker $(cat cmd)", "docker is never allowed whole"),
    ("python3 -c \"$CODE\"", "has a word that comes from an expansion"),
])
def test_always_is_not_offered_for_what_it_could_not_name_narrowly(work, line, why):
    judged = judge(work, line)
    assert judged.decision == "ask" and judged.proposals == ()
    assert why in judged.why_no_always


def test_a_rule_the_users_deny_would_contradict_is_not_offered(work):
    judged = judge(work, "git push origin", deny=["shell(git push origin main)"])
    assert judged.proposals == ()
    assert "would also cover what your deny rule shell(git push origin main) forbids" in judged.why_no_always


def test_a_saved_destructive_rule_means_exactly_those_paths(work):
    allow = ["shell(rm notes.txt)"]
    assert judge(work, "rm notes.txt", allow=allow).decision == "allow"
    assert judge(work, "rm notes.txt /elsewhere", allow=allow).decision == "ask"
    assert judge(work, "rm -rf /elsewhere", allow=allow).decision == "ask"
    assert judge(work, "chmod +x a.sh b.sh", allow=["shell(chmod +x *)"]).decision == "allow"  # `*`: on purpose


def test_a_rule_word_never_matches_a_word_from_an_expansion(work):
    assert judge(work, "rm $f", allow=["shell(rm notes.txt)"]).decision == "ask"
    assert judge(work, "touch '$f'", allow=["shell(touch $f)"]).decision == "allow"  # quoted: literal
