"""Fault suite, secrets: a configured secret never corrupts what is stored and never leaks, in
any form, whatever it looks like (a JSON token, a role name, a key with a newline).

The real tmg process against the local mock API; what is checked is what a provider receives,
what the user sees and what lands on disk.
"""

from __future__ import annotations

import json

import pytest

from e2e.mock_llm import Text
from e2e.plur import FakePlur

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py

CANARY = "sk-canary-7d41c0ffee2b9a"


def _write_config(tmg, api_key: str, headers: dict[str, str] | None = None) -> None:
    lines = ["PROVIDERS:", "  mock:", "    MODEL: openai/mock-model", f"    API_KEY: {api_key}",
             f"    URL: {tmg.llm.url}"]
    if headers:
        lines += ["    HEADERS:"] + [f"      {k}: {json.dumps(v)}" for k, v in headers.items()]
    # No memory server at all: these tests are about the provider's secrets.
    lines += ["MEMORY:", "  ENABLED: false", "  SERVER: none"]
    tmg.config.write_text("\n".join(lines) + "\n")


def _files_under(root) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("api_key, headers", [
    ('"null"', None),  # usual for a local server
    ("${MOCK_API_KEY}", {"X-Client-Role": "user"}),
    ("${MOCK_API_KEY}", {"X-Part": "content"}),
    ("${MOCK_API_KEY}", {"X-Speaker": "assistant"}),
], ids=["api-key-null", "header-user", "header-content", "header-assistant"])
def test_a_secret_equal_to_a_json_token_or_role_leaves_history_intact(tmg, llm, api_key, headers):
    _write_config(tmg, api_key, headers)
    llm.enqueue(Text("first answer"), Text("second answer"))
    first = tmg.run("first question")
    assert first.code == 0, first.err
    second = tmg.run("second question")
    assert second.code == 0, second.err
    assert "skipped" not in second.err  # no record of the first exchange was thrown away
    sent = [(m["role"], m["content"]) for m in llm.requests[1]["messages"] if m["role"] != "system"]
    assert sent == [("user", "first question"), ("assistant", "first answer"), ("user", "second question")]
    shown = tmg.run("-t", "--json")
    assert shown.code == 0, shown.err
    messages = json.loads(shown.out)["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "first question"), ("assistant", "first answer"),
        ("user", "second question"), ("assistant", "second answer")]


def test_a_path_holding_a_common_secret_is_not_mangled_in_a_warning(tmg, llm, tmp_path):
    _write_config(tmg, "${MOCK_API_KEY}", {"X-Speaker": "assistant"})
    home = tmp_path / "assistant" / "home"
    env = tmg.env(TMG_HOME=str(home))
    llm.enqueue(Text("one"), Text("two"))
    assert tmg.run("q1", env=env).code == 0
    [session] = [p for p in (home / "sessions" / "default").iterdir() if p.is_dir()]
    with (session / "history.jsonl").open("a") as f:
        f.write('{"role": "assistant", "content": "torn wri')
    r = tmg.run("q2", env=env)
    assert r.code == 0, r.err
    assert f"history {session / 'history.jsonl'}: skipped a torn last line" in r.err


def test_a_key_with_a_trailing_newline_works_and_never_leaks(tmg, llm):
    _write_config(tmg, "${MOCK_API_KEY}")
    llm.enqueue(Text(f"the key you gave is {CANARY}"))
    r = tmg.run(f"is {CANARY} my key?", env=tmg.env(MOCK_API_KEY=CANARY + "\n"))
    assert r.code == 0, r.err
    assert llm.requests[0].headers["authorization"] == f"Bearer {CANARY}"  # stripped, sent once
    assert len(llm.requests) == 1
    assert CANARY not in r.err
    files = _files_under(tmg.home)
    assert any(name.endswith("transcript.md") for name in files)
    leaks = [name for name, data in files.items() if CANARY.encode() in data]
    assert leaks == []


@pytest.mark.parametrize("learn", ["capture", "full"])
def test_memory_never_learns_or_is_asked_about_a_key(tmg, llm, tmp_path, learn):
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config(learn=learn))
    llm.enqueue(Text(f"Noted: your key is {CANARY}. Always use it."))
    r = tmg.run("-r", f"please remember that my key is {CANARY}",
                env=tmg.env(memory=True, MOCK_API_KEY=CANARY + "\n"))
    assert r.code == 0, r.err
    if learn == "capture":
        assert plur.calls("plur_capture")  # memory did write the episode, masked
    else:  # full: a teaching that holds a secret is not learned at all, masked or not
        assert plur.calls("plur_learn") == []
    leaks = [name for name, data in _files_under(tmp_path).items() if CANARY.encode() in data]
    assert leaks == []  # not the store, the server's call log, the spool nor the history


@pytest.mark.parametrize("value, what", [
    (f"{CANARY[:9]}\n{CANARY[9:]}", "a line break"),
    (f"{CANARY[:9]}\r\n{CANARY[9:]}", "a line break"),
    (f"{CANARY[:9]}é{CANARY[9:]}", "a non-ASCII character"),
], ids=["inner-lf", "inner-crlf", "non-ascii"])
def test_a_key_http_cannot_send_is_one_config_error_naming_it(tmg, llm, value, what):
    _write_config(tmg, "${MOCK_API_KEY}")
    r = tmg.run("hello", env=tmg.env(MOCK_API_KEY=value))
    assert r.code == 1
    lines = r.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tmg: error:"), r.err
    assert "PROVIDERS.mock.API_KEY" in lines[0] and what in lines[0] and "MOCK_API_KEY" in lines[0]
    assert "canary" not in r.err and "internal error" not in r.err and "retry" not in r.err
    assert llm.requests == []  # nothing sent, nothing retried


def test_a_header_value_with_a_line_break_is_one_config_error_naming_it(tmg, llm):
    _write_config(tmg, "${MOCK_API_KEY}", {"X-Token": f"{CANARY}\r\nX-Injected: 1"})
    r = tmg.run("hello")
    assert r.code == 1
    lines = r.err.splitlines()
    assert len(lines) == 1 and "PROVIDERS.mock.HEADERS.X-Token has a line break" in lines[0], r.err
    assert CANARY not in r.err and llm.requests == []


def test_doctor_names_a_secret_too_short_or_too_common_to_mask(tmg):
    _write_config(tmg, '"null"', {"X-Speaker": "assistant", "X-Token": CANARY})
    r = tmg.run("doctor")
    assert r.code == 0, r.out + r.err
    warned = [line for line in r.out.splitlines() if "cannot be masked safely" in line]
    assert len(warned) == 2, r.out
    assert "PROVIDERS.mock.API_KEY is shorter than 8 characters" in warned[0]
    assert "PROVIDERS.mock.HEADERS.X-Speaker is a common word" in warned[1]
    assert CANARY not in r.out + r.err and "X-Token" not in r.out
