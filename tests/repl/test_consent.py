"""The consent prompt with prompt-toolkit's real input parsing (a pipe for the keyboard): one
key answers, what follows the key is left for the next prompt, and the question shows the whole
command or says how much of it is not shown."""

from __future__ import annotations

import io

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tmg.environment import Environment
from tmg.permissions.action import ToolAction
from tmg.permissions.engine import Judgement, Question
from tmg.repl.asking import read_line
from tmg.repl.consent import MAX_PREVIEW_LINES, ConsentPrompt


def question(command: str = "touch notes.txt", proposals=("shell(touch notes.txt)",), why_not: str = "",
             preview: str | None = None) -> Question:
    action = ToolAction("shell", "run", command=command, preview=command if preview is None else preview)
    return Question(action, Judgement("ask", "running a command asks by default", tuple(proposals),
                                      why_no_always=why_not), "default")


@pytest.fixture
def keyboard():
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        yield pipe


def prompt(out: io.StringIO | None = None) -> ConsentPrompt:
    return ConsentPrompt(Environment(stdout=out or io.StringIO(), stdin=None))


@pytest.mark.parametrize("key, kind", [("y", "once"), ("s", "session"), ("a", "always"), ("n", "no"), ("Y", "once"),
                                       ("\x03", "no"), ("\x04", "no")])
async def test_one_key_answers(keyboard, key, kind):
    keyboard.send_text(key)
    assert (await prompt()(question())).kind == kind


async def test_the_words_typed_after_the_key_are_the_next_prompt_not_swallowed(keyboard):
    keyboard.send_text("ynow write new.txt\r")
    assert (await prompt()(question())).kind == "once"
    assert await read_line("> ") == "now write new.txt"  # the REPL's next line gets them


async def test_other_keys_and_enter_do_not_answer(keyboard):
    keyboard.send_text("x\r q")
    keyboard.send_text("n")
    assert (await prompt()(question())).kind == "no"


async def test_without_a_rule_to_save_only_once_and_no_are_offered_and_the_question_says_why(keyboard):
    keyboard.send_text("a")  # not an answer here
    keyboard.send_text("y")
    out = io.StringIO()
    ask = question("rm -rf /elsewhere", proposals=(), why_not="/elsewhere is outside the working folder")
    assert (await prompt(out)(ask)).kind == "once"
    text = out.getvalue()
    assert '(no "always": /elsewhere is outside the working folder)' in text
    assert "[a]" not in text and "[s]" not in text


async def test_m_takes_a_note_for_the_model(keyboard):
    keyboard.send_text("muse a temp folder\r")
    answer = await prompt()(question())
    assert (answer.kind, answer.note) == ("no", "use a temp folder")


def test_the_question_shows_the_rule_it_would_save_and_the_whole_command():
    lines = prompt().lines(question())
    assert lines[0] == "tmg asks: shell wants to run (running a command asks by default)"
    assert lines[1] == "  touch notes.txt"
    assert lines[2] == '  "this session" and "always" allow: shell(touch notes.txt)'
    assert "[s] yes, this session" in lines[3] and "[a] yes, always" in lines[3]


def test_a_long_command_says_how_much_is_not_shown():
    body = "\n".join(f"echo {i}" for i in range(MAX_PREVIEW_LINES + 5)) + "\n" + "x" * 1000
    lines = prompt().lines(question(body, preview=body))
    assert "  echo 0" in lines and f"  echo {MAX_PREVIEW_LINES - 1}" in lines
    assert f"  echo {MAX_PREVIEW_LINES}" not in lines
    assert "  [... 6 more lines (1041 characters) not shown]" in lines
    wide = prompt().lines(question("y" * 1000))
    assert wide[1].endswith("[... 600 more characters on this line]")


def test_control_characters_cannot_redraw_the_terminal():
    lines = prompt().lines(question("echo \x1b[2Jgone"))
    assert lines[1] == "  echo \\x1b[2Jgone"
