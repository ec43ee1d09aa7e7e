"""Sessions belong to a mode and a project (issue 21 item 3, issue 25 item 5): a run in another
project never continues this one's conversation; `tmg sessions` shows each one's folder and searches
them; `--new`, `-t`, `--resume ID` and `--continue` work per project; a TMG_HOME from before
projects keeps working."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def run_in(tmg, folder: Path, *args: str, stdin: str | None = None):
    r = tmg.run(*args, cwd=folder, env=tmg.env(), timeout=60, stdin=stdin)
    return r.code, r.out, r.err


def user_texts(request) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def projects(tmp_path: Path) -> tuple[Path, Path]:
    a = tmp_path / "project-a"
    (a / ".git").mkdir(parents=True)  # a git repository: its root is the project, wherever one stands in it
    (a / "src").mkdir()
    b = tmp_path / "project-b"
    b.mkdir()
    return a, b


def test_a_session_begun_in_one_project_is_not_continued_in_another(tmg, llm, tmp_path):
    a, b = projects(tmp_path)
    assert run_in(tmg, a, "-r", "project A's confidential plan is ORCHID")[0] == 0
    assert run_in(tmg, a / "src", "-r", "more about A")[0] == 0  # the same project: the git root
    assert user_texts(llm.requests[1]) == ["project A's confidential plan is ORCHID", "more about A"]

    code, out, err = run_in(tmg, b, "-r", "a question in project B")
    assert code == 0, err
    sent = json.dumps(llm.requests[2]["messages"])
    assert "ORCHID" not in sent and user_texts(llm.requests[2]) == ["a question in project B"]

    assert run_in(tmg, a, "-r", "back in A")[0] == 0
    assert user_texts(llm.requests[3]) == ["project A's confidential plan is ORCHID", "more about A", "back in A"]

    code, listing, _ = run_in(tmg, b, "sessions")
    rows = listing.splitlines()
    assert len(rows) == 2 and all(row.startswith("* ") for row in rows)  # each project's current one
    assert any(str(a) in row and "project A's" in row for row in rows)
    assert any(str(b) in row and "a question in project B" in row for row in rows)

    shown = run_in(tmg, b, "-t")[1]  # -t reads this project's session
    assert "a question in project B" in shown and "ORCHID" not in shown


def test_new_and_the_transcript_work_per_project(tmg, llm, tmp_path):
    a, b = projects(tmp_path)
    run_in(tmg, a, "-r", "first in A")
    run_in(tmg, b, "-r", "first in B")
    assert run_in(tmg, b, "--new", "-r", "fresh in B")[0] == 0
    assert user_texts(llm.requests[-1]) == ["fresh in B"]
    run_in(tmg, a, "-r", "second in A")
    assert user_texts(llm.requests[-1]) == ["first in A", "second in A"]  # --new in B left A alone
    assert "fresh in B" in run_in(tmg, b, "-t")[1]
    assert len(tmg.session_dirs()) == 3


def test_resume_an_older_session_by_id_and_continue_the_latest(tmg, llm, tmp_path):
    a, _b = projects(tmp_path)
    run_in(tmg, a, "-r", "the old conversation about tides")
    old = tmg.session_dirs()[0].name
    run_in(tmg, a, "--new", "-r", "a newer one about stars")

    code, out, err = run_in(tmg, a, "--resume", old, "-r", "and what causes them?")
    assert code == 0, err
    assert user_texts(llm.requests[-1]) == ["the old conversation about tides", "and what causes them?"]
    run_in(tmg, a, "-r", "one more")  # resumed: it is this project's current session again
    assert user_texts(llm.requests[-1])[0] == "the old conversation about tides"

    newer = [d.name for d in tmg.session_dirs() if d.name != old][0]
    # touched last: the most recent (later than the old one's last write by more than the clock's tick)
    later = (tmg.home / "sessions" / "default" / old / "history.jsonl").stat().st_mtime + 10
    os.utime(tmg.home / "sessions" / "default" / newer / "history.jsonl", (later, later))
    assert run_in(tmg, a, "--continue", "-r", "continuing")[0] == 0
    assert user_texts(llm.requests[-1]) == ["a newer one about stars", "continuing"]

    code, _out, err = run_in(tmg, a, "--resume", "-r", "no id")
    assert code == 2 and "--resume without an ID picks a session in the interactive chat" in err
    code, _out, err = run_in(tmg, a, "--new", "--continue", "-r", "x")
    assert code == 2 and "--new and --continue each choose the session" in err


def test_search_finds_messages_across_the_histories_without_a_model(tmg, llm, tmp_path):
    a, b = projects(tmp_path)
    run_in(tmg, a, "-r", "the lighthouse keeper's log")
    run_in(tmg, b, "-r", "nothing to see here")
    before = len(llm.requests)
    code, out, err = run_in(tmg, b, "sessions", "--search", "LIGHTHOUSE", "keeper")
    assert code == 0, err
    assert len(llm.requests) == before  # no model
    hits = [line for line in out.splitlines() if line.startswith("  user:")]
    assert hits == ["  user: the lighthouse keeper's log"]
    assert str(a) in out and "nothing to see" not in out
    assert "no message holds" in run_in(tmg, b, "sessions", "--search", "zebra")[1]


def test_a_system_prompt_for_one_run_replaces_person(tmg, llm, tmp_path):
    tmg.write_config("PERSON: You are the configured persona.\n")
    assert tmg.run("-s", "You answer like a pirate.", "-r", "ahoy").code == 0
    assert llm.requests[-1]["messages"][0] == {"role": "system", "content": "You answer like a pirate."}
    assert tmg.run("-r", "and now?").code == 0  # for that run only
    assert llm.requests[-1]["messages"][0]["content"].startswith("You are the configured persona.")


def test_a_tmg_home_from_before_projects_keeps_working(tmg, llm, tmp_path):
    a, _b = projects(tmp_path)
    legacy = tmg.home / "sessions" / "default" / "20240101-090000-abcd"
    legacy.mkdir(parents=True)
    (legacy / "history.jsonl").write_text(
        '{"role":"user","content":"an old secret from some project","ts":1}\n'
        '{"role":"assistant","content":"noted","ts":2,"meta":{"turn":1}}\n')
    (legacy / "transcript.md").write_text("# tmg session 20240101-090000-abcd · mode default\n\nold words\n")
    (legacy.parent / "current").write_text("20240101-090000-abcd\n")

    assert "old words" in tmg.run("-t", "20240101").out  # found by id, as ever
    code, out, err = run_in(tmg, a, "-r", "a new question")
    assert code == 0, err
    assert user_texts(llm.requests[-1]) == ["a new question"]  # never continued on its own
    (said,) = [line for line in err.splitlines() if "sessions now belong to a project" in line]
    assert "tmg --resume 20240101-090000-abcd" in said
    assert "(before projects)" in run_in(tmg, a, "sessions")[1]

    code, _out, err = run_in(tmg, a, "--resume", "20240101-090000-abcd", "-r", "picking it up")
    assert code == 0, err
    assert user_texts(llm.requests[-1]) == ["an old secret from some project", "picking it up"]
    assert re.search(r"belongs to .*project-a from now on", err)
    run_in(tmg, a, "-r", "and on")
    assert user_texts(llm.requests[-1])[0] == "an old secret from some project"  # adopted: current here
