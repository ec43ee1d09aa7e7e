"""The JSON sink: every event it writes is valid against docs/output-format.schema.json, json mode
writes the result only, and a failure is a result that says why, with its exit code."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from tmg.engine.turn import Turn
from tmg.errors import BudgetLimitError, ConfigError, TurnLimitError
from tmg.llm.gateway import Completion, ToolCallRequest, Usage
from tmg.media import Image
from tmg.tools.registry import ToolResult
from tmg.ui.json_events import JsonEvents

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "output-format.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def events(out: io.StringIO) -> list[dict]:
    lines = out.getvalue().splitlines()
    parsed = [json.loads(line) for line in lines]
    for event in parsed:
        VALIDATOR.validate(event)
    return parsed


def a_run(sink: JsonEvents) -> None:
    """What the engine reports of a prompt with one tool call (refused) and a priced answer."""
    sink.start(session_id="s-1", model="openai/m", provider="mock", mode="default", cwd="/w", permission_mode="default")
    first = Turn(1, 1, "q", "s-1", "default", model="openai/m")
    first.completion = Completion("", [ToolCallRequest("c1", "shell", '{"command": "ls"}'),
                                       ToolCallRequest("c2", "read_file", "not json")], Usage(100, 10, 0.01))
    sink.on_answer(first)
    sink.on_tool("shell", '{"command": "ls"}', ToolResult("refused: shell needs your consent", is_error=True))
    sink.on_tool("read_file", "not json", ToolResult("a picture", images=(Image("image/png", "AAAA"),)))
    sink.on_usage(first.completion.usage, first)
    sink.on_turn_end(first)
    sink.on_notice("retry 1/3 in 0.1 s: HTTP 429")
    second = Turn(1, 2, "q", "s-1", "default", model="openai/m")
    sink.on_text("hel")
    sink.on_text("lo")
    second.completion = Completion("hello", [], Usage(0, 0, None, reported=False))
    sink.on_answer(second)
    sink.on_usage(second.completion.usage, second)
    sink.on_turn_end(second)


def test_stream_json_events_follow_the_schema_in_order():
    out = io.StringIO()
    sink = JsonEvents(out, stream=True)
    a_run(sink)
    sink.finish()
    got = events(out)
    assert [e["type"] for e in got] == ["init", "tool_use", "tool_use", "tool_result", "tool_result", "usage", "notice",
                                        "text", "text", "usage", "result"]
    assert got[2]["input"] == "not json" and got[4]["images"] == 1
    assert [e["id"] for e in got if e["type"] == "tool_result"] == ["c1", "c2"]
    result = got[-1]
    assert result["subtype"] == "success" and result["exit_code"] == 0 and result["result"] == "hello"
    assert result["usage"] == {"input_tokens": 100, "output_tokens": 10}
    assert result["total_cost_usd"] is None  # the second call was not priced: unknown, not 0.01
    assert result["num_turns"] == 2 and [c["id"] for c in result["tool_calls"]] == ["c1", "c2"]
    assert result["notices"] == ["retry 1/3 in 0.1 s: HTTP 429"]


def test_json_writes_one_result_object_only():
    out = io.StringIO()
    sink = JsonEvents(out, stream=False)
    a_run(sink)
    sink.finish()
    sink.finish()  # once, whatever calls it again
    (result,) = events(out)
    assert result["type"] == "result" and result["session_id"] == "s-1" and result["model"] == "openai/m"


@pytest.mark.parametrize("error, subtype, code", [
    (TurnLimitError("stopped after --max-turns (2) model calls"), "error_max_turns", 1),
    (BudgetLimitError("stopped after 2 model calls: they cost $1"), "error_max_budget_usd", 1),
    (KeyboardInterrupt(), "interrupted", 130),
    (ConfigError("invalid config in x.yaml: ..."), "error", 1),
])
def test_a_run_that_fails_ends_with_a_result_saying_why(error, subtype, code):
    out = io.StringIO()
    sink = JsonEvents(out, stream=True, redact=lambda s: s.replace("x.yaml", "***"))
    sink.finish(error)  # a config error comes before any session: no init, no id
    (result,) = events(out)
    assert (result["subtype"], result["exit_code"], result["is_error"]) == (subtype, code, True)
    assert result["error"] and "x.yaml" not in result["error"]
    assert result["session_id"] is None


def test_a_reader_that_goes_away_is_not_an_error():
    class Gone(io.StringIO):
        def write(self, _text):
            raise BrokenPipeError

        def fileno(self):
            raise io.UnsupportedOperation

    sink = JsonEvents(Gone(), stream=True)
    a_run(sink)
    sink.finish()  # nothing raised
