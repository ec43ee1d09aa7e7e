"""Slash command parsing: what is a command, what goes to the model, what a typo is told."""

from __future__ import annotations

import pytest

from tmg.repl.commands import COMMANDS, Command, Prompt, UnknownCommand, help_lines, names, parse


@pytest.mark.parametrize("entry, expected", [
    ("/help", Command("help")),
    ("  /new  ", Command("new")),
    ("/mode work", Command("mode", "work")),
    ("/model   openai/gpt-4o  ", Command("model", "openai/gpt-4o")),
    ("/MODEL x", Command("model", "x")),
    ("/quit", Command("exit")),
    ("/exit", Command("exit")),
])
def test_commands_parse_with_their_argument(entry, expected):
    assert parse(entry) == expected


@pytest.mark.parametrize("entry", ["", "   ", "\n\n"])
def test_a_blank_entry_is_nothing(entry):
    assert parse(entry) is None


def test_text_goes_to_the_model_as_typed_but_trimmed():
    assert parse("  what is 2+2?\n") == Prompt("what is 2+2?")
    assert parse("line one\nline two") == Prompt("line one\nline two")


def test_double_slash_sends_a_literal_slash():
    assert parse("//etc/hosts: what is it for?") == Prompt("/etc/hosts: what is it for?")


@pytest.mark.parametrize("typed, suggestions", [
    ("hepl", ("help",)),
    ("exti", ("exit",)),
    ("he", ("help",)),
    ("mod", ("mode", "model")),
    ("m", ("mcp", "memory", "mode", "model")),
    ("cots", ("cost",)),
    ("xyzzy", ()),
])
def test_unknown_commands_get_suggestions_not_a_model_call(typed, suggestions):
    entry = parse(f"/{typed} some args")
    assert entry == UnknownCommand(typed, suggestions)
    message = entry.message()
    assert f"unknown command /{typed}" in message and "/help" in message
    for s in suggestions:
        assert f"/{s}" in message


def test_a_path_like_entry_is_a_command_not_a_prompt():
    assert parse("/usr/bin/env?") == UnknownCommand("usr/bin/env?", ())


def test_every_spec_command_exists_and_is_listed():
    required = {"help", "new", "mode", "model", "memory", "cost", "config", "transcript", "exit"}
    assert required <= {c.name for c in COMMANDS}
    assert required <= set(names())
    listed = "\n".join(help_lines())
    for name in required:
        assert f"/{name}" in listed


@pytest.mark.parametrize("columns", [120, 80, 60])
def test_help_wraps_at_words_within_the_terminal_width(columns):
    lines = help_lines(columns)
    assert all(len(line) <= columns for line in lines)
    indent = lines[0].index("this list")
    described: list[str] = []
    for line in lines:
        if line[:indent].strip():  # a command's first line
            described.append(line[indent:])
        else:  # its description, continued under itself
            described[-1] += " " + line[indent:]
    assert described == [c.help for c in COMMANDS]  # every word whole, in order


def test_an_unknown_command_reads_as_one_sentence():
    assert UnknownCommand("foo", ()).message() == "unknown command /foo (/help lists them)"
    assert UnknownCommand("hepl", ("help",)).message() == "unknown command /hepl: did you mean /help? (/help lists them)"
