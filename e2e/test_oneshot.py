"""One-shot chat end to end: tmg against the local mock API, as a real process for the first
check and in-process (tests/support/cli.py) for the rest."""

from __future__ import annotations

import json

import pytest

from e2e.conftest import API_KEY
from e2e.mock_llm import HttpError, Text, ToolCall


def test_piped_question_streams_the_answer_to_stdout_only(tmg, llm):
    llm.enqueue(Text("The answer is **42**.", chunks=6))
    r = tmg.run(stdin="what is the answer?\n")
    assert r.code == 0, r.err
    assert r.out == "The answer is **42**.\n"  # plain when piped: no ANSI, nothing else
    assert llm.requests[0]["stream"] is True
    assert llm.requests[0]["messages"][-1] == {"role": "user", "content": "what is the answer?"}
    assert llm.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


@pytest.mark.in_process
def test_argument_and_piped_stdin_are_both_sent(tmg, llm):
    llm.enqueue(Text("summary"))
    r = tmg.run("summarise this", stdin="line one\nline two\n")
    assert r.code == 0, r.err
    assert llm.requests[0]["messages"][-1]["content"] == "summarise this\n\nline one\nline two"


@pytest.mark.in_process
def test_tool_call_result_reaches_the_next_request(tmg, llm):
    (tmg.work / "notes.txt").write_text("the password is swordfish\n")
    llm.enqueue(ToolCall("read_file", {"path": "notes.txt"}), Text("It is swordfish."))
    r = tmg.run("what is in notes.txt?")
    assert r.code == 0, r.err
    assert r.out == "It is swordfish.\n"
    second = llm.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and "swordfish" in second[-1]["content"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "read_file"
    assert "read_file" in r.err  # tool activity is logged on stderr, not stdout


@pytest.mark.in_process
def test_tool_cannot_read_outside_the_working_directory(tmg, llm):
    llm.enqueue(ToolCall("read_file", {"path": "../tmg.yaml"}), Text("refused"))
    r = tmg.run("read the config")
    assert r.code == 0, r.err
    assert "outside the allowed folders" in llm.requests[1]["messages"][-1]["content"]


@pytest.mark.in_process
def test_max_turns_stops_an_endless_tool_loop(tmg, llm):
    tmg.write_config("MAX_TURNS: 3\n")
    llm.repeat_last = True
    llm.enqueue(ToolCall("list_folder", {"path": "."}))
    r = tmg.run("loop forever")
    assert r.code == 1
    assert len(llm.requests) == 3
    assert "MAX_TURNS (3)" in r.err and r.err.count("tmg: error:") == 1


@pytest.mark.in_process
def test_rate_limit_is_retried_and_announced(tmg, llm):
    llm.enqueue(HttpError(429, retry_after=0), Text("after retry"))
    r = tmg.run("hello")
    assert r.code == 0, r.err
    assert r.out == "after retry\n"
    assert len(llm.requests) == 2
    assert "retry 1/" in r.err and "429" in r.err


@pytest.mark.in_process
def test_auth_failure_fails_at_once_with_a_clear_message(tmg, llm):
    llm.enqueue(HttpError(401), Text("never"))
    r = tmg.run("hello")
    assert r.code == 1
    assert len(llm.requests) == 1
    assert r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tmg: error:") and "mock" in lines[0]
    assert API_KEY not in r.err


@pytest.mark.in_process
def test_second_run_resumes_and_new_does_not(tmg, llm):
    llm.enqueue(Text("first answer"), Text("second answer"), Text("fresh answer"))
    assert tmg.run("first question").code == 0
    assert tmg.run("second question").code == 0
    contents = [m["content"] for m in llm.requests[1]["messages"] if m["role"] != "system"]
    assert contents == ["first question", "first answer", "second question"]
    assert tmg.run("--new", "third question").code == 0
    contents = [m["content"] for m in llm.requests[2]["messages"] if m["role"] != "system"]
    assert contents == ["third question"]
    assert len(tmg.session_dirs()) == 2


@pytest.mark.in_process
def test_transcript_prints_the_previous_exchange(tmg, llm):
    llm.enqueue(Text("Paris is the capital."))
    assert tmg.run("capital of France?").code == 0
    r = tmg.run("-t")
    assert r.code == 0, r.err
    assert "capital of France?" in r.out and "Paris is the capital." in r.out
    assert "\x1b[" not in r.out  # plain when piped
    data = json.loads(tmg.run("-t", "--json").out)
    assert [m["role"] for m in data["messages"]] == ["user", "assistant"]
    assert len(llm.requests) == 1  # -t never calls the model


@pytest.mark.in_process
def test_torn_history_line_loads_with_a_warning(tmg, llm):
    llm.enqueue(Text("one"), Text("two"))
    assert tmg.run("q1").code == 0
    history = tmg.session_dirs()[0] / "history.jsonl"
    with history.open("a") as f:
        f.write('{"role": "assistant", "content": "torn wri')
    r = tmg.run("q2")
    assert r.code == 0, r.err
    assert "torn last line" in r.err
    contents = [m["content"] for m in llm.requests[1]["messages"] if m["role"] != "system"]
    assert contents == ["q1", "one", "q2"]


@pytest.mark.in_process
def test_secrets_never_reach_history_or_transcript(tmg, llm):
    llm.enqueue(Text(f"echoing a key: {API_KEY}"))
    r = tmg.run(f"is {API_KEY} my key?")
    assert r.code == 0
    session = tmg.session_dirs()[0]
    for name in ("history.jsonl", "transcript.md"):
        text = (session / name).read_text()
        assert API_KEY not in text and "***" in text
    assert API_KEY not in r.err


@pytest.mark.in_process
def test_no_prompt_on_devnull_is_a_usage_error_not_a_hang(tmg):
    r = tmg.run(timeout=15)
    assert r.code == 2 and "no prompt given" in r.err


@pytest.mark.in_process
def test_no_provider_prints_guidance_and_exits_1(tmg):
    tmg.config.write_text("MODE: default\n")
    r = tmg.run("hello")
    assert r.code == 1
    assert "OPENAI_API_KEY" in r.err and "PROVIDERS" in r.err and r.out == ""


@pytest.mark.in_process
def test_invalid_config_names_the_key(tmg):
    tmg.config.write_text("MAX_TURNS: lots\n")
    r = tmg.run("hello")
    assert r.code == 1 and "MAX_TURNS must be a number" in r.err and str(tmg.config) in r.err


@pytest.mark.in_process
def test_unknown_option_is_a_usage_error(tmg):
    for args in (["--bogus"], ["-t", "--bogus"]):
        r = tmg.run(*args)
        assert r.code == 2 and "No such option: --bogus" in r.err and r.out == ""


@pytest.mark.in_process
def test_a_cut_off_answer_in_a_pipe_is_not_written_twice(tmg, llm):
    from e2e.mock_llm import DropStream

    llm.enqueue(DropStream("The answer is forty"), Text("The answer is forty-two."))
    r = tmg.run("q")
    assert r.code == 1
    assert r.out.count("The answer is forty") == 1 and "forty-two" not in r.out
    assert "cut off" in r.err and len(llm.requests) == 1
    assert "[interrupted]" in tmg.run("-t").out


@pytest.mark.in_process
def test_non_utf8_piped_text_is_sent_with_replacement_characters(tmg, llm):
    llm.enqueue(Text("ok"))
    proc_input = b"caf\xe9 au lait\n"
    import subprocess

    from e2e.conftest import tmg_command

    r = subprocess.run(tmg_command() + ["what is this"], input=proc_input, capture_output=True,
                       cwd=tmg.work, env=tmg.env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert llm.requests[0]["messages"][-1]["content"] == "what is this\n\ncaf\ufffd au lait"


@pytest.mark.in_process
def test_binary_piped_input_is_a_usage_error(tmg, llm):
    import subprocess

    from e2e.conftest import tmg_command

    r = subprocess.run(tmg_command() + ["describe"], input=b"\x7fELF\x00\x01", capture_output=True,
                       cwd=tmg.work, env=tmg.env(), timeout=60)
    assert r.returncode == 2 and b"binary" in r.stderr and llm.requests == []


@pytest.mark.in_process
def test_a_mistyped_provider_name_for_m_is_a_usage_error_naming_the_providers(tmg, llm):
    r = tmg.run("-m", "mokc", "hello")
    assert r.code == 2
    (line,) = r.err.splitlines()
    assert line.startswith("tmg: error: 'mokc' is neither a provider nor a model id; did you mean mock?")
    assert llm.requests == [] and tmg.session_dirs() == []
