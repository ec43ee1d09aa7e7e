"""The chat command line read without typer means what typer would make of it, or is left to typer."""

from __future__ import annotations

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from tmg.cli import chat as chat_module
from tmg.cli.chat_line import FLAGS, VALUE_OPTIONS, ChatLine, parse_chat_line
from tmg.session.options import ChatOptions

# What only typer handles: the help and the version.
TYPER_ONLY = {"-h", "--help", "--version"}


def typer_reads(args: list[str]) -> ChatLine | None:
    """The ChatLine typer's chat command runs for ``args``; None when typer refuses them."""
    seen: list[ChatLine] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chat_module, "run_chat", lambda line: seen.append(line) or 0)
        try:
            chat_module.app(args=args, prog_name="tmg", standalone_mode=False)
        except (typer.TyperException, typer.Exit):  # a usage error, or --help/--version done
            return None
    return seen[-1] if seen else None


def test_both_know_the_same_options() -> None:
    command = typer.main.get_command(chat_module.app)
    takes_value, flags = set(), set()
    for param in command.params:
        if isinstance(param, typer.core.TyperOption):
            names = set(param.opts) - TYPER_ONLY
            (flags if param.is_flag else takes_value).update(names)
    assert set(VALUE_OPTIONS) == takes_value
    assert set(FLAGS) == flags


def test_the_usual_lines() -> None:
    assert parse_chat_line([]) == ChatLine(ChatOptions())
    assert parse_chat_line(["--new", "-r", "what", "is", "2+2?"]) == ChatLine(
        ChatOptions(new=True, raw=True), ("what", "is", "2+2?"))
    assert parse_chat_line(["q", "-m", "gpt", "--config=f.yaml", "--mode", "work", "--debug"]) == ChatLine(
        ChatOptions(config_path="f.yaml", mode="work", model="gpt"), ("q",), debug=True)
    assert parse_chat_line(["-t", "abc", "--json"]) == ChatLine(ChatOptions(), ("abc",), transcript=True, as_json=True)
    assert parse_chat_line(["-r", "--", "-m", "--help"]) == ChatLine(ChatOptions(raw=True), ("-m", "--help"))


def test_what_it_leaves_to_typer() -> None:
    for args in (["--help"], ["-h"], ["q", "--version"], ["-rt"], ["-cf.yaml"], ["-m"], ["-m", "-r"],
                 ["--new=yes"], ["-x"], ["-5"], ["--conf", "f"]):
        assert parse_chat_line(args) is None, args


TOKENS = st.sampled_from([*VALUE_OPTIONS, *FLAGS, "--config=", "--mode=w", "--raw=1", "--", "-", "q", "a b",
                          "doctor", "-x", "-rt", "--help", "--version", "-5", "=", "--model=x=y"])


@settings(max_examples=300, deadline=None)
@given(st.lists(TOKENS, max_size=7))
def test_whatever_it_reads_typer_reads_the_same(args) -> None:
    line = parse_chat_line(args)
    if line is not None:
        assert typer_reads(args) == line, args
