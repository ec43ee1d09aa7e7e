"""The input layer on prompt-toolkit's pipe input: which key sends, which adds a line, what
Ctrl-C and Ctrl-D do, history across runs, the prompt's label, slash completion."""

from __future__ import annotations

import asyncio
import io
import re

import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output

from tmg.repl import commands
from tmg.repl.input import PromptInput, PromptInterrupted

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def pipe():
    with create_pipe_input() as inp:
        yield inp


def make(pipe, history=None, output=None, label=("default", "mock-model")):
    return PromptInput(lambda: label, history, commands.names(), input=pipe, output=output or DummyOutput())


def read(prompt: PromptInput) -> str:
    return asyncio.run(asyncio.wait_for(prompt.read(), 5))


def test_enter_sends_the_line(pipe):
    pipe.send_text("hello world\r")
    assert read(make(pipe)) == "hello world"


@pytest.mark.parametrize("newline", ["\x1b\r", "\n"], ids=["alt-enter", "ctrl-j"])
def test_alt_enter_and_ctrl_j_add_a_line_instead_of_sending(pipe, newline):
    pipe.send_text(f"first{newline}second\r")
    assert read(make(pipe)) == "first\nsecond"


def test_pasted_text_keeps_its_newlines(pipe):
    pipe.send_text("\x1b[200~line one\nline two\x1b[201~\r")
    assert read(make(pipe)) == "line one\nline two"


def test_emacs_keys_edit_the_line(pipe):
    # Ctrl-A to the start, Ctrl-K cuts to the end, then type again; Ctrl-E to the end.
    pipe.send_text("wrong words\x01\x0bright\x05 words\r")
    assert read(make(pipe)) == "right words"


def test_ctrl_c_on_an_empty_line_is_told_apart_from_clearing_text(pipe):
    prompt = make(pipe)
    pipe.send_text("\x03")
    with pytest.raises(PromptInterrupted) as empty:
        read(prompt)
    assert empty.value.had_text is False
    pipe.send_text("half a thought\x03")
    with pytest.raises(PromptInterrupted) as cleared:
        read(prompt)
    assert cleared.value.had_text is True


def test_ctrl_d_on_an_empty_line_ends_input(pipe):
    pipe.send_text("\x04")
    with pytest.raises(EOFError):
        read(make(pipe))


def test_ctrl_d_inside_text_deletes_instead_of_ending(pipe):
    pipe.send_text("abc\x01\x04\r")  # Ctrl-A, then Ctrl-D deletes the "a"
    assert read(make(pipe)) == "bc"


def test_history_is_kept_across_runs(tmp_path, pipe):
    path = tmp_path / "state" / "input_history"
    pipe.send_text("what is the capital of France?\r")
    read(make(pipe, history=path))
    assert path.exists()
    with create_pipe_input() as later:  # a new process: a fresh PromptInput on the same file
        later.send_text("\x1b[A\r")  # Up, Enter
        assert read(make(later, history=path)) == "what is the capital of France?"


def test_unusable_history_path_falls_back_to_memory(tmp_path, pipe):
    blocker = tmp_path / "file"
    blocker.write_text("")
    pipe.send_text("still works\r")
    assert read(make(pipe, history=blocker / "sub" / "input_history")) == "still works"


def test_the_prompt_shows_mode_and_model(pipe):
    screen = io.StringIO()
    output = Vt100_Output(screen, lambda: Size(rows=24, columns=80), term="xterm")
    pipe.send_text("x\r")
    read(make(pipe, output=output, label=("work", "openai/gpt-4o")))
    assert "work · openai/gpt-4o >" in ANSI.sub("", screen.getvalue())


async def _type_tab_then_enter(prompt: PromptInput, pipe, text: str) -> str:
    reading = asyncio.ensure_future(prompt.read())
    pipe.send_text(text + "\t")
    buffer = prompt._session.default_buffer  # completion is applied asynchronously: wait for it
    for _ in range(100):
        await asyncio.sleep(0.01)
        if buffer.text != text:
            break
    pipe.send_text("\r")
    return await asyncio.wait_for(reading, 5)


def test_tab_completes_a_slash_command(pipe):
    assert asyncio.run(_type_tab_then_enter(make(pipe), pipe, "/hel")) == "/help"


def test_tab_does_not_complete_plain_text(pipe):
    assert asyncio.run(_type_tab_then_enter(make(pipe), pipe, "hel")) == "hel"


def test_the_history_file_keeps_no_config_secret(tmp_path):
    from tmg.repl.input import history_at

    path = tmp_path / "input_history"
    history = history_at(path, lambda s: s.replace("sk-live-123456", "***"))
    history.store_string("my key is sk-live-123456, is it valid?")
    text = path.read_text()
    assert "sk-live-123456" not in text and "my key is ***, is it valid?" in text
