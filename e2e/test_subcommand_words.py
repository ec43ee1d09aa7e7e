"""Global options before a subcommand, and a prompt that is a subcommand's name (issue 12, item 9)."""

from __future__ import annotations

import pytest

from e2e.mock_llm import Text

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def test_global_options_may_precede_a_subcommand_and_nothing_reaches_the_model(tmg, llm):
    other = tmg.root / "other.yaml"
    other.write_text(tmg.config.read_text() + "MAX_TURNS: 7\n")
    r = tmg.run("-c", str(other), "doctor")
    assert r.code == 0, r.out + r.err
    assert r.out.splitlines()[0] == f"ok    config: {other} is valid"

    r = tmg.run("--debug", "config")
    assert r.code == 0, r.err
    assert f"config file: {tmg.config}" in r.out

    r = tmg.run("--mode", "work", "sessions")
    assert (r.code, r.out) == (0, "no sessions of mode work yet\n"), r.err  # --mode before it holds
    r = tmg.run("sessions", "--debug")
    assert r.code == 0, r.err
    assert llm.requests == []
    assert tmg.session_dirs() == [] and tmg.session_dirs("work") == []


def test_a_prompt_that_is_a_subcommand_name_is_asked_after_double_dash(tmg, llm):
    llm.enqueue(Text("Doctors heal."))
    r = tmg.run("--", "doctor")
    assert (r.code, r.out.strip()) == (0, "Doctors heal."), r.err
    assert llm.requests[0]["messages"][-1]["content"] == "doctor"


def test_a_subcommand_with_extra_words_is_a_usage_error_saying_how_to_ask_them(tmg, llm):
    r = tmg.run("config", "is", "broken")
    assert r.code == 2
    assert "tmg -- config is broken" in r.err
    assert llm.requests == []


def test_help_says_how_options_and_subcommand_names_combine(tmg):
    r = tmg.run("--help")
    assert r.code == 0
    assert "tmg -c f.yaml doctor" in r.out and "tmg -- doctor" in r.out
