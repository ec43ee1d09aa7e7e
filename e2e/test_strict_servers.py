"""What real servers (llama.cpp's among them) do that OpenAI does not, against the strict mock.

The mock rejects ``content: null`` on an assistant message (a 500 validation error, like
llama-cpp-python) and roles that do not alternate (like SmolLM2's or Mistral's chat template),
and can answer with an empty 200 stream, without usage, or cut at ``max_tokens``. A failed
prompt must never leave the session unusable: the prompt after it is checked every time.
"""

from __future__ import annotations

import json

import pytest

from e2e.mock_llm import EmptyStream, HttpError, Text, ToolCall

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def _roles(request) -> list[str]:
    return [m["role"] for m in request["messages"] if m["role"] != "system"]


def test_a_tool_call_turn_leaves_the_session_usable(tmg, llm):
    (tmg.work / "notes.txt").write_text("the password is swordfish\n")
    llm.enqueue(ToolCall("read_file", {"path": "notes.txt"}), Text("It is swordfish."), Text("Bye."))
    r = tmg.run("what is in notes.txt?")
    assert r.code == 0, r.err
    r = tmg.run("thanks")
    assert r.code == 0, r.err
    assert r.out == "Bye.\n"
    assert len(llm.requests) == 3  # nothing rejected, nothing retried
    call = [m for m in llm.requests[2]["messages"] if m.get("tool_calls")][0]
    assert call["content"] == ""  # not null: llama.cpp's server rejects null
    assert _roles(llm.requests[2]) == ["user", "assistant", "tool", "assistant", "user"]


def test_a_session_stored_with_null_tool_call_content_still_works(tmg, llm):
    llm.enqueue(ToolCall("list_folder", {"path": "."}), Text("Done."), Text("Again."))
    assert tmg.run("list").code == 0
    history = tmg.session_dirs()[0] / "history.jsonl"
    records = [json.loads(line) for line in history.read_text().splitlines()]
    for record in records:  # what older versions stored
        if record.get("tool_calls"):
            record["content"] = None
    history.write_text("".join(json.dumps(r) + "\n" for r in records))
    r = tmg.run("and now?")
    assert r.code == 0, r.err
    assert r.out == "Again.\n"


def test_a_validation_error_sent_as_500_is_not_retried(tmg, llm):
    message = "2 validation errors: {'type': 'string_type', 'loc': ('body', 'messages', 1), 'msg': 'Input should be a valid string'}"
    llm.enqueue(HttpError(500, message=message), Text("never"))
    r = tmg.run("hello")
    assert r.code == 1
    assert len(llm.requests) == 1
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "rejected the request" in lines[0] and "retry" not in r.err


def test_an_empty_stream_is_compacted_once_and_does_not_poison_the_next_prompt(tmg, llm):
    llm.enqueue(Text("first answer"), EmptyStream(), EmptyStream(), Text("fine again"))
    assert tmg.run("first question").code == 0
    r = tmg.run("word " * 3000)
    assert r.code == 1
    assert len(llm.requests) == 3  # the failing prompt once, then once more after compaction
    assert "empty stream" in r.err and "context window" in r.err
    assert "broke off" not in r.err and "retry" not in r.err
    r = tmg.run("a short question")
    assert r.code == 0, r.err
    assert r.out == "fine again\n"
    contents = [m["content"] for m in llm.requests[3]["messages"] if m["role"] != "system"]
    assert contents == ["first question", "first answer", "a short question"]
    # The failed prompt is on record (transcript, history) but marked, not silently lost.
    stored = json.loads(tmg.run("-t", "--json").out)["messages"]
    assert "empty stream" in stored[2]["meta"]["failed"]


def test_a_prompt_that_failed_before_any_answer_leaves_alternating_roles(tmg, llm):
    llm.enqueue(HttpError(400, message="Invalid request."), Text("ok"))
    assert tmg.run("bad").code == 1
    r = tmg.run("good")
    assert r.code == 0, r.err
    assert _roles(llm.requests[1]) == ["user"]


def test_unknown_usage_is_shown_as_unknown_in_the_transcript(tmg, llm):
    llm.usage = False  # like llama.cpp's server: no usage chunk
    llm.enqueue(Text("hello there"))
    assert tmg.run("hi").code == 0
    transcript = tmg.run("-t").out
    assert "tokens unknown" in transcript and "0 in / 0 out" not in transcript
    stored = json.loads(tmg.run("-t", "--json").out)["messages"]
    assert stored[1]["meta"]["usage"] == {"in": None, "out": None, "cost": None}


def test_an_answer_cut_at_max_tokens_says_so(tmg, llm):
    tmg.write_config("")
    tmg.config.write_text(tmg.config.read_text().replace("    BACKEND:", "    MAX_TOKENS: 3\n    BACKEND:"))
    llm.enqueue(Text("one two three four five six seven eight nine ten"))
    r = tmg.run("count")
    assert r.code == 0, r.err
    assert llm.requests[0]["max_tokens"] == 3
    assert r.out == "one two thre\n"
    assert "cut off at the token limit" in r.err and "PROVIDERS.mock.MAX_TOKENS" in r.err
    assert "cut off at the token limit" in tmg.run("-t").out


def test_tool_arguments_with_a_raw_newline_are_accepted_and_logged_on_one_line(tmg, llm):
    (tmg.work / "notes.txt").write_text("swordfish\n")
    raw = '{"path": "notes.txt", "why": "line one\nline two"}'  # a raw newline inside a string
    llm.enqueue(ToolCall("read_file", raw), Text("done"))
    r = tmg.run("read it")
    assert r.code == 0, r.err
    assert "swordfish" in llm.requests[1]["messages"][-1]["content"]
    tool_lines = [line for line in r.err.splitlines() if "read_file" in line]
    assert len(tool_lines) == 1 and "line one\\nline two" in tool_lines[0] and "failed" not in tool_lines[0]


def test_a_prompt_left_unanswered_by_a_killed_run_does_not_break_alternation(tmg, llm):
    llm.enqueue(Text("first answer"), Text("fine"))
    assert tmg.run("first question").code == 0
    history = tmg.session_dirs()[0] / "history.jsonl"
    with history.open("a") as f:  # what kill -9 between the prompt and its answer leaves
        f.write(json.dumps({"role": "user", "content": "never answered", "ts": 1.0}) + "\n")
    r = tmg.run("next question")
    assert r.code == 0, r.err
    assert r.out == "fine\n"
    assert _roles(llm.requests[1]) == ["user", "assistant", "user", "assistant", "user"]
    assert "tmg stopped before answering" in llm.requests[1]["messages"][-2]["content"]
    stored = [m["role"] for m in json.loads(tmg.run("-t", "--json").out)["messages"]]
    assert stored == ["user", "assistant", "user", "user", "assistant"]  # the record is left as written
