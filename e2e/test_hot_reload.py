"""Hot reload end to end: the real tmg process, its config file rewritten while a prompt runs.

The mock serves an endless tool loop whose every reply waits ``DELAY`` seconds; the test saves
the config as soon as a request arrives, so the save lands before tmg's next phase boundary.
Nothing asserts on time: waits are bounded polls.
"""

from __future__ import annotations

import threading
import time

from e2e.conftest import Result
from e2e.mock_llm import Text, ToolCall

DELAY = 0.5  # each model reply waits this long: room for the test to save the config


def start(tmg, *args: str, **kwargs) -> tuple[threading.Thread, list[Result]]:
    """Run tmg in the background; the result lands in the returned list."""
    out: list[Result] = []
    thread = threading.Thread(target=lambda: out.append(tmg.run(*args, **kwargs)), daemon=True)
    thread.start()
    return thread, out


def wait_requests(llm, count: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while len(llm.requests) < count:
        assert time.monotonic() < deadline, f"only {len(llm.requests)} of {count} requests arrived"
        time.sleep(0.005)


def finish(thread: threading.Thread, out: list[Result]) -> Result:
    thread.join(90)
    assert out, "tmg did not finish"
    return out[0]


def system_text(request) -> str:
    first = request["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def transcript(tmg) -> str:
    (session,) = tmg.session_dirs()
    return (session / "transcript.md").read_text()


def test_a_tool_loop_sees_max_turns_raised_after_its_first_call(tmg, llm):
    tmg.write_config("MAX_TURNS: 1\n")
    llm.repeat_last = True
    llm.enqueue(ToolCall("list_folder", {"path": "."}, delay=DELAY))
    thread, out = start(tmg, "loop for a while")
    wait_requests(llm, 1)
    tmg.write_config("MAX_TURNS: 3\n")
    r = finish(thread, out)
    assert r.code == 1
    assert len(llm.requests) == 3
    assert "MAX_TURNS (3)" in r.err
    notice = f"config reloaded from {tmg.config}: MAX_TURNS 1 -> 3"
    assert r.err.count(notice) == 1
    assert notice in transcript(tmg)


def test_without_a_save_max_turns_1_makes_one_call(tmg, llm):
    # The control for the test above: the same loop, no save, stops after one call.
    tmg.write_config("MAX_TURNS: 1\n")
    llm.repeat_last = True
    llm.enqueue(ToolCall("list_folder", {"path": "."}))
    r = tmg.run("loop for a while")
    assert r.code == 1 and len(llm.requests) == 1 and "MAX_TURNS (1)" in r.err


def test_a_broken_save_is_reported_once_the_run_goes_on_and_the_fix_is_applied(tmg, llm):
    tmg.write_config("MAX_TURNS: 6\nPERSON: You are the original persona.\n")
    good = tmg.config.read_text()
    llm.enqueue(*[ToolCall("list_folder", {"path": "."}, delay=DELAY) for _ in range(3)], Text("done"))
    thread, out = start(tmg, "work through it")
    wait_requests(llm, 1)
    broken = good + "MEMORY: [unclosed\n"
    tmg.config.write_text(broken)
    wait_requests(llm, 2)
    tmg.config.write_text(broken)  # the same broken file saved again: not reported again
    wait_requests(llm, 3)
    tmg.config.write_text(good.replace("the original persona", "the fixed persona"))
    r = finish(thread, out)

    assert r.code == 0, r.err
    assert r.out == "done\n"
    assert len(llm.requests) == 4
    failures = [line for line in r.err.splitlines() if "config reload failed" in line]
    assert len(failures) == 1
    assert f"keeping the previous config: config file {tmg.config} line " in failures[0]
    assert "the original persona" in system_text(llm.requests[1])  # kept through the broken saves
    assert "the original persona" in system_text(llm.requests[2])
    assert "the fixed persona" in system_text(llm.requests[3])  # the fix reached the next call
    applied = (f"config reloaded from {tmg.config}: "
               "PERSON 'You are the original persona.' -> 'You are the fixed persona.'")
    assert r.err.count(applied) == 1
    text = transcript(tmg)
    assert text.count("config reload failed") == 1 and applied in text


def test_a_session_fixed_key_is_reported_as_needing_a_restart(tmg, llm):
    tmg.write_config("MAX_TURNS: 5\n")
    llm.enqueue(ToolCall("list_folder", {"path": "."}, delay=DELAY), Text("ok"))
    thread, out = start(tmg, "go")
    wait_requests(llm, 1)
    tmg.write_config("MAX_TURNS: 5\nMCP_SERVERS:\n  extra:\n    COMMAND: some-server\n")
    r = finish(thread, out)
    assert r.code == 0, r.err
    assert r.err.count(f"MCP_SERVERS changed in {tmg.config}; restart tmg to apply it") == 1
