"""Stream faults (issue 9, defect 8): the real `tmg` one-shot against a mock provider that
breaks in every way a real one does. Never a hang, one clear line, the right exit code,
nothing torn stored; and the pipes around tmg (a reader that stops early, a stdin that never
ends, a stdin far too large) are no failure of the turn, or are refused before anything is kept.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from e2e.conftest import API_KEY, tmg_command
from e2e.mock_llm import BadUtf8Stream, DropStream, MalformedStream, RawResponse, Stall, Text

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

HTML_502 = ("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
            "</h1></center><hr><center>nginx</center></body></html>")


def stored(tmg) -> list[dict]:
    """The session's messages as `tmg -t --json` shows them (it must load)."""
    r = tmg.run("-t", "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)["messages"]


def assert_one_error_line(err: str, *fragments: str) -> str:
    assert "Traceback" not in err and API_KEY not in err
    errors = [line for line in err.splitlines() if line.startswith("tmg: error:")]
    assert len(errors) == 1, err
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


def assert_no_answer_stored(tmg, prompt: str) -> None:
    messages = stored(tmg)
    assert [m["content"] for m in messages if m["role"] == "user"] == [prompt]
    assert [m for m in messages if m["role"] == "assistant"] == []


def test_a_malformed_event_after_some_text_fails_the_prompt_cleanly(tmg, llm):
    llm.enqueue(MalformedStream("The first half"))
    r = tmg.run("q")
    assert r.code == 1
    assert_one_error_line(r.err, "malformed", "cut off")
    assert len(llm.requests) == 1  # printed text cannot be taken back: no retry on a pipe
    assert_no_answer_stored(tmg, "q")


def test_a_stream_of_garbage_is_retried_then_one_line(tmg, llm):
    llm.repeat_last = True
    llm.enqueue(MalformedStream(""))
    r = tmg.run("q")
    assert r.code == 1 and r.out == ""
    assert_one_error_line(r.err, "malformed")
    assert len(llm.requests) == 5  # the retry policy's 1 + 4
    assert_no_answer_stored(tmg, "q")


def test_a_stream_truncated_mid_answer_fails_cleanly(tmg, llm):
    llm.enqueue(DropStream("Half an ans", chunks=2))
    r = tmg.run("q")
    assert r.code == 1
    assert_one_error_line(r.err, "cut off")
    assert_no_answer_stored(tmg, "q")


def test_a_provider_that_never_sends_headers_fails_after_one_retry_naming_the_timeout(tmg, llm):
    tmg.write_config("    FIRST_BYTE_TIMEOUT: 0.5\n")
    llm.repeat_last = True
    llm.enqueue(Stall(seconds=60))
    r = tmg.run("q", timeout=60)
    assert r.code == 1 and r.out == ""
    assert_one_error_line(r.err, "FIRST_BYTE_TIMEOUT")
    assert len(llm.requests) == 2  # a stall is retried once (RetryPolicy.stall_retries)
    assert llm.wait_outcome(1, timeout=10) == "client_closed"  # tmg hung up: no request left hanging
    assert_no_answer_stored(tmg, "q")


def test_a_provider_that_stalls_mid_answer_fails_naming_the_timeout(tmg, llm):
    tmg.write_config("    STREAM_IDLE_TIMEOUT: 0.5\n")
    llm.enqueue(Stall("The start of it", seconds=60))
    r = tmg.run("q", timeout=60)
    assert r.code == 1
    assert r.out.startswith("The start of i")
    assert_one_error_line(r.err, "STREAM_IDLE_TIMEOUT")
    assert len(llm.requests) == 1
    assert_no_answer_stored(tmg, "q")


@pytest.mark.parametrize("status", [200, 502])
def test_an_html_page_instead_of_a_stream_is_one_line_without_the_markup(tmg, llm, status):
    llm.repeat_last = True
    llm.enqueue(RawResponse(status, HTML_502))
    r = tmg.run("q")
    assert r.code == 1 and r.out == ""
    line = assert_one_error_line(r.err)
    assert "<center>" not in line and len(line) < 400
    assert "502 Bad Gateway" in line or "text/html" in line
    assert_no_answer_stored(tmg, "q")


def test_invalid_utf8_in_the_stream_is_replaced_and_the_answer_stored(tmg, llm):
    llm.enqueue(BadUtf8Stream("caf", after=" ok"))
    r = tmg.run("q")
    assert r.code == 0, r.err
    assert r.out == "caf\ufffd\ufffd ok\n"
    assert [m["content"] for m in stored(tmg) if m["role"] == "assistant"] == ["caf\ufffd\ufffd ok"]


# -- the pipes around tmg ----------------------------------------------------------------------

ANSWER = "line one\nline two\nline three\nline four\nline five\nline six"


def test_a_reader_that_stops_early_is_not_a_failure_and_the_answer_is_stored(tmg, llm):
    # `tmg "q" | head -n 1`: the reader closes the pipe while the answer still streams.
    llm.enqueue(Text(ANSWER, chunks=6, chunk_delay=0.4))
    proc = subprocess.Popen(tmg_command() + ["q"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmg.work, env=tmg.env())
    assert proc.stdout.readline() == b"line one\n"
    proc.stdout.close()
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, err
    assert err == b""  # quietly
    assert [m["content"] for m in stored(tmg) if m["role"] == "assistant"] == [ANSWER]


def test_a_stdin_that_does_not_end_is_said_once_and_closing_it_goes_on(tmg, llm, tmp_path):
    llm.enqueue(Text("answered"))
    err_path = tmp_path / "err.txt"
    with err_path.open("wb") as err:
        proc = subprocess.Popen(tmg_command() + ["x"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, cwd=tmg.work, env=tmg.env())
    try:
        deadline = time.monotonic() + 30
        while b"stdin" not in err_path.read_bytes():
            assert proc.poll() is None and time.monotonic() < deadline, err_path.read_bytes()
            time.sleep(0.05)
        out, _ = proc.communicate(b"more context\n", timeout=60)  # then end of input (Ctrl-D)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert out == b"answered\n"
    notice = [line for line in err_path.read_text().splitlines() if "stdin" in line]
    assert len(notice) == 1 and "Ctrl-D" in notice[0] and "</dev/null" in notice[0]
    assert llm.requests[0]["messages"][-1]["content"] == "x\n\nmore context"


def test_a_prompt_too_large_to_ever_send_is_refused_and_kept_nowhere(tmg, llm):
    # 3000: room for the built-in tools' schemas (about 1,300 tokens) and a small prompt
    tmg.write_config("MAX_HISTORY_TOKENS: 3000\n")
    huge = "spam " * 20_000  # 100 KB: about 25000 tokens
    r = tmg.run("summarise", stdin=huge)
    assert r.code == 1 and r.out == ""
    assert_one_error_line(r.err, "MAX_HISTORY_TOKENS")
    assert llm.requests == []
    for path in tmg.home.rglob("*"):
        if path.is_file():
            assert "spam spam" not in path.read_text(errors="replace"), path
    llm.enqueue(Text("fine"))
    assert tmg.run("a small one").code == 0  # and the session is not poisoned
