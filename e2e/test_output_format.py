"""The scripting contract through the real tmg: --output-format stream-json writes events valid
against docs/output-format.schema.json, one a line, and nothing else on stdout; json writes one
result object; --max-turns and --max-budget-usd (MAX_BUDGET_USD) stop with one line and exit 1,
the result saying why; a failure is a result with its exit code."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

import pytest

from e2e.mock_llm import HttpError, Text, ToolCall

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "docs" / "output-format.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
PRICED = "openai/gpt-4o-mini"  # in litellm's price map: usage has a cost


def lines(out: str) -> list[dict]:
    """Every stdout line as JSON, each validated against the documented schema."""
    events = [json.loads(line) for line in out.splitlines()]
    for event in events:
        VALIDATOR.validate(event)
    return events


def priced(tmg, extra: str = "") -> None:
    tmg.config.write_text(tmg.config.read_text().replace("openai/mock-model", PRICED) + extra)


def test_stream_json_events_are_valid_and_stdout_is_only_them(tmg):
    priced(tmg)
    (tmg.work / "notes.txt").write_text("the word is avocado\n")
    tmg.llm.enqueue(ToolCall("read_file", {"path": "notes.txt"}, usage=(1000, 20)),
                    Text("It is avocado.", chunks=3, usage=(1200, 5)))
    result = tmg.run("--output-format", "stream-json", "what is the word?")
    assert result.code == 0, result.err
    events = lines(result.out)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "init" and kinds[-1] == "result"
    assert kinds == ["init", "tool_use", "tool_result", "usage", "text", "text", "text", "usage", "result"]
    init, use, done, final = events[0], events[1], events[2], events[-1]
    assert init["session_id"] == tmg.session_dirs()[0].name and init["model"] == PRICED
    assert use["name"] == "read_file" and use["input"] == {"path": "notes.txt"} and done["id"] == use["id"]
    assert "avocado" in done["output"] and done["is_error"] is False
    assert "".join(e["delta"] for e in events if e["type"] == "text") == "It is avocado."
    assert final["result"] == "It is avocado." and final["subtype"] == "success" and final["num_turns"] == 2
    assert final["usage"] == {"input_tokens": 2200, "output_tokens": 25} and final["total_cost_usd"] > 0
    assert "read_file" in result.err  # the tool line stays on stderr


def test_json_is_one_result_object(tmg):
    priced(tmg)
    tmg.llm.enqueue(ToolCall("shell", {"command": "touch made.txt"}), Text("four", usage=(50, 1)))
    result = tmg.run("--output-format", "json", "2+2?")
    assert result.code == 1, result.err  # a refused tool call: what was asked is not done
    (only,) = lines(result.out)
    assert only["type"] == "result" and only["version"] == 1 and only["result"] == "four"
    assert only["exit_code"] == 1 and only["is_error"] is False and only["model"] == PRICED
    assert only["session_id"] == tmg.session_dirs()[0].name
    (call,) = only["tool_calls"]  # refused (a one-shot cannot ask): an error result, said as such
    assert call["name"] == "shell" and call["is_error"] is True and call["output"].startswith("refused:")


def test_max_turns_stops_with_one_line_and_the_result_says_why(tmg):
    tmg.llm.enqueue(ToolCall("list_folder", {"path": "."}), ToolCall("glob", {"pattern": "*"}), Text("never"))
    result = tmg.run("--output-format", "json", "--max-turns", "2", "look around")
    assert result.code == 1
    (line,) = [x for x in result.err.splitlines() if x.startswith("tmg: error:")]
    assert "stopped after --max-turns (2) model calls" in line and "raise --max-turns" in line
    (only,) = lines(result.out)
    assert only["subtype"] == "error_max_turns" and only["exit_code"] == 1 and only["error"] in line
    assert tmg.llm.pending == 1  # the third model call was never made


def test_max_budget_usd_stops_with_one_line(tmg):
    priced(tmg)
    expensive = (2_000_000, 0)  # $0.30 a call at gpt-4o-mini's price
    tmg.llm.enqueue(ToolCall("list_folder", {"path": "."}, usage=expensive),
                    ToolCall("glob", {"pattern": "*"}, usage=expensive), Text("never"))
    result = tmg.run("--output-format", "stream-json", "--max-budget-usd", "0.5", "look around")
    assert result.code == 1
    (line,) = [x for x in result.err.splitlines() if x.startswith("tmg: error:")]
    assert "the 2 model calls of this prompt have cost $0.60, reaching --max-budget-usd ($0.50)" in line
    final = lines(result.out)[-1]
    assert final["subtype"] == "error_max_budget_usd" and final["total_cost_usd"] >= 0.5
    assert tmg.llm.pending == 1


def test_the_config_key_caps_too_and_is_named(tmg):
    priced(tmg, "MAX_BUDGET_USD: 0.1\n")
    tmg.llm.enqueue(ToolCall("list_folder", {"path": "."}, usage=(2_000_000, 0)), Text("never"))
    result = tmg.run("look around")
    assert result.code == 1 and result.out == ""
    assert "reaching MAX_BUDGET_USD ($0.10): no more model calls; raise MAX_BUDGET_USD in the config" in result.err


def test_a_failure_is_a_result_with_its_exit_code_and_stdout_stays_json(tmg):
    tmg.llm.enqueue(HttpError(401))
    result = tmg.run("--output-format", "stream-json", "hi")
    assert result.code == 1
    events = lines(result.out)
    assert [e["type"] for e in events] == ["init", "result"]
    assert events[-1]["subtype"] == "error" and events[-1]["exit_code"] == 1 and events[-1]["error"]
    broken = tmg.run("--output-format", "json", "hi", env=tmg.env(TMG_MAX_TURNS="zero"))  # a config error
    (only,) = lines(broken.out)
    assert broken.code == 1 and only["session_id"] is None and "MAX_TURNS" in only["error"]


def test_a_format_that_is_not_one_is_a_usage_error(tmg):
    result = tmg.run("--output-format", "yaml", "hi")
    assert result.code == 2 and result.out == ""
    assert "use one of: text, json, stream-json" in result.err


def test_reading_a_session_back_loads_none_of_it(tmg):
    """`tmg -t` stays a fast path (P1): no JSON sink, engine, hooks or context pipeline."""
    from e2e.test_fast_paths import imported_heavy

    tmg.llm.enqueue(Text("an answer"))
    assert tmg.run("a question").code == 0
    code, loaded = imported_heavy(tmg, "-t", watched=("tmg.ui.json_events", "tmg.engine", "tmg.hooks", "tmg.context"))
    assert (code, loaded) == (0, [])
