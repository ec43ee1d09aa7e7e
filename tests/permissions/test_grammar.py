"""Programs' command lines as tmg reads them: where a subcommand stands after global options,
and which options make a program run code its words do not show."""

from __future__ import annotations

import pytest

from tmg.permissions.programs import readings, runs_hidden_code, subcommand_at


@pytest.mark.parametrize("words, at, certain", [
    ("git status", (1,), True),
    ("git -C . status", (3,), True),
    ("git -C. status", (2,), True),
    ("git --git-dir=.git --no-pager push", (3,), True),
    ("git -c a=b push", (3,), True),
    ("git --weird x push", (2, 3), False),  # an option tmg does not know: both readings
    ("git --version", (), True),
    ("kubectl -n ns delete pod x", (3,), True),
    ("docker --context x rm c", (3,), True),
    ("npm --prefix . publish", (3,), True),
    ("cargo +nightly build", (2,), True),
    ("make -j 4 build", (2, 3), False),  # -j [N]
    ("ls -la", (1,), True),
])
def test_the_subcommand_is_found_past_global_options(words, at, certain):
    assert subcommand_at(tuple(words.split())) == (at, certain)


def test_an_alias_of_a_subcommand_reads_as_the_subcommand():
    from tmg.permissions.programs import subcommand_name

    assert subcommand_name("npm", "i") == "install" and subcommand_name("npm", "run-script") == "run"
    assert subcommand_name("git", "i") == "i"
    assert readings(("npm", "--prefix", ".", "i", "x")) == ([(0, 3, 4)], True)


@pytest.mark.parametrize("words, why", [
    ("git -c core.pager=x log", "git -c can make it run other commands"),
    ("git -ccore.pager=x log", "git -c can make it run other commands"),
    ("git --config-env=core.pager=X log", "git --config-env can make it run other commands"),
    ("git --exec-path=/tmp status", "git --exec-path can make it run other commands"),
    ("git x", "not one of git's own commands"),
    ("git rebase -x 'make test' main", "git rebase -x runs a command"),
    ("git config alias.x '!rm'", "git config can run or define other commands"),
    ("cargo --config build.rustc-wrapper=x build", "cargo --config can make it run other commands"),
    ("apt-get -o DPkg::Pre-Invoke::=x install y", "apt-get -o can make it run other commands"),
    ("kubectl --kubeconfig k.yaml get pods", "kubectl --kubeconfig can make it run other commands"),
    ("gh my-alias", "not one of gh's own commands"),
])
def test_options_and_subcommands_that_run_hidden_code_are_named(words, why):
    import shlex

    assert why in (runs_hidden_code(tuple(shlex.split(words))) or "")


@pytest.mark.parametrize("words", ["git status", "git --exec-path", "git -C . log -p", "docker ps", "npm test",
                                   "kubectl get pods", "cargo build", "ls -la"])
def test_ordinary_lines_run_no_hidden_code(words):
    assert runs_hidden_code(tuple(words.split())) is None
