"""The REPL's form for a server's question (tmg.repl.elicit), typed into prompt-toolkit's pipe
input: what is asked, what an empty answer gives, what goes back to the server."""

from __future__ import annotations

import io
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tmg.environment import Environment
from tmg.repl.elicit import ElicitForm, Field

# The shapes of MCP 2025-11-25's form fields, each with a default (as server-everything sends them).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "line": {"type": "string", "default": "It was a dark and stormy night."},
        "guests": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
        "budget": {"type": "number", "default": 3.14},
        "friend": {"type": "string", "enum": ["Monica", "Rachel"], "default": "Monica"},
        "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"},
                                             {"const": "hero-2", "title": "Green Lantern"}], "default": "hero-1"},
        "pet": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"], "default": "pet-2"},
        "tools": {"type": "array", "items": {"type": "string", "enum": ["Guitar", "Piano"]}, "default": ["Guitar"]},
        "vegan": {"type": "boolean", "default": True},
        "email": {"type": "string"},
    },
    "required": ["name"],
}


async def answer(lines: list[str], schema: dict[str, Any] = SCHEMA) -> tuple[dict[str, Any] | None, str]:
    out = io.StringIO()
    envr = Environment(stdin=None, stdout=out, stderr=io.StringIO(), env={})
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("".join(f"{line}\r" for line in lines))
        got = await ElicitForm(envr)("booking", "Who is the table for?", schema)
    return got, out.getvalue()


async def test_enter_takes_each_fields_default_and_leaves_an_optional_one_out():
    got, _shown = await answer(["y", "Ada"] + [""] * 9)
    assert got == {"name": "Ada", "line": "It was a dark and stormy night.", "guests": 42, "budget": 3.14,
                   "friend": "Monica", "hero": "hero-1", "pet": "pet-2", "tools": ["Guitar"], "vegan": True}


async def test_typed_answers_are_read_as_the_fields_types_titles_included():
    got, shown = await answer(["y", "Ada", "Once upon a time", "500", "4", "2.5", "rachel", "Green Lantern",
                               "Cats", "Piano, guitar", "no", "ada@example.com"])
    assert "that is not a whole number from 1 to 100" in shown  # 500 is out of range: asked again
    assert got == {"name": "Ada", "line": "Once upon a time", "guests": 4, "budget": 2.5, "friend": "Rachel",
                   "hero": "hero-2", "pet": "pet-1", "tools": ["Piano", "Guitar"], "vegan": False,
                   "email": "ada@example.com"}


async def test_a_required_field_without_a_default_is_asked_again_and_declining_sends_nothing():
    got, shown = await answer(["y", "", "", ""])
    assert got is None and shown.count("this one is required") == 3 and "declined" in shown
    got, _shown = await answer(["n"])
    assert got is None


@pytest.mark.parametrize("field, default, shown", [
    ({"type": "integer", "default": 42}, 42, "(a whole number, default 42)"),
    ({"type": "boolean", "default": False}, False, "(yes or no, default no)"),
    ({"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}], "default": "a"}, "a", "(one of Alpha, default Alpha)"),
])
async def test_the_question_says_the_default_that_enter_takes(field, default, shown):
    got, _text = await answer(["y", ""], {"type": "object", "properties": {"x": field}})
    assert got == {"x": default} and shown in Field("x", field, required=False).question()


async def test_a_page_to_open_is_shown_with_its_host_and_never_opened():
    out = io.StringIO()
    envr = Environment(stdin=None, stdout=out, stderr=io.StringIO(), env={})
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("y\r")
        assert await ElicitForm(envr).open_url("pay", "Pay for the table", "https://shop.example.com/pay?x=1")
        pipe.send_text("n\r")
        assert not await ElicitForm(envr).open_url("pay", "Pay", "https://shop.example.com/pay")
    assert "open a page on shop.example.com: https://shop.example.com/pay?x=1" in out.getvalue()
    assert "tmg opens nothing itself" in out.getvalue()
