"""FAILOVER_ORDER: a provider that fails after its retries hands the prompt to the next one
(issue 12, item 14); an auth failure does not."""

from __future__ import annotations

import json

import pytest

from e2e.mock_llm import HttpError, MockLLM, Text

pytestmark = pytest.mark.in_process  # tmg.run in this process: see tests/support/cli.py


def two_providers(tmg, primary: MockLLM) -> None:
    tmg.config.write_text(
        "PROVIDERS:\n"
        f"  primary:\n    MODEL: openai/primary-model\n    API_KEY: sk-primary\n    URL: {primary.url}\n"
        f"  spare:\n    MODEL: openai/spare-model\n    API_KEY: ${{MOCK_API_KEY}}\n    URL: {tmg.llm.url}\n"
        "SELECTED_PROVIDER: primary\n"
        "FAILOVER_ORDER: [primary, spare]\n"
    )


def test_a_provider_failing_after_its_retries_fails_over_to_the_next(tmg, llm):
    with MockLLM() as primary:
        primary.enqueue(*[HttpError(503)] * 5)  # the first call and its 4 retries
        llm.enqueue(Text("The spare answers."))
        two_providers(tmg, primary)
        r = tmg.run("-r", "hello")
        assert r.code == 0, r.err
        assert r.out == "The spare answers.\n"
        assert len(primary.requests) == 5 and len(llm.requests) == 1
    said = [line for line in r.err.splitlines() if "failing over" in line]
    assert len(said) == 1 and said[0].startswith("tmg: provider primary failed after 4 retries")
    assert said[0].endswith("failing over to spare (openai/spare-model), next in FAILOVER_ORDER")
    (session,) = tmg.session_dirs()
    assert "failing over to spare" in (session / "transcript.md").read_text()
    stored = [json.loads(line) for line in (session / "history.jsonl").read_text().splitlines()]
    answer = [m for m in stored if m["role"] == "assistant"][-1]
    assert answer["meta"]["provider"] == "spare" and answer["meta"]["model"] == "openai/spare-model"


def test_an_auth_failure_does_not_fail_over(tmg, llm):
    with MockLLM() as primary:
        primary.enqueue(HttpError(401))
        two_providers(tmg, primary)
        r = tmg.run("hello")
        assert r.code == 1
        assert "failing over" not in r.err
        assert llm.requests == []


def test_after_a_failover_the_session_stays_with_the_spare_and_records_it_per_turn(tmg, llm):
    # A 429 through every retry: the spare answers, and the rest of the session (its later runs)
    # goes to the spare without asking the primary again; a new session starts with the primary.
    with MockLLM() as primary:
        primary.enqueue(*[HttpError(429, retry_after=0)] * 5, Text("The primary again."))
        llm.enqueue(Text("The spare answers."), Text("Still the spare."))
        two_providers(tmg, primary)
        first = tmg.run("-r", "hello")
        assert first.code == 0, first.err
        assert len(primary.requests) == 5 and "rate limited by provider 'primary'" in first.err
        (said,) = [line for line in first.err.splitlines() if "failing over" in line]
        assert said.endswith("failing over to spare (openai/spare-model), next in FAILOVER_ORDER")
        second = tmg.run("-r", "and then?")
        assert (second.code, second.out) == (0, "Still the spare.\n"), second.err
        assert len(primary.requests) == 5 and "failing over" not in second.err
        assert second.err.startswith("tmg: provider primary failed earlier in this session; it goes on with spare")
        fresh = tmg.run("--new", "-r", "a new session")
        assert fresh.out == "The primary again.\n" and len(primary.requests) == 6
    session = tmg.session_dirs()[0]
    transcript = (session / "transcript.md").read_text()
    assert transcript.count("openai/spare-model (provider spare, failed over from primary)") == 2  # each turn
    stored = [json.loads(line) for line in (session / "history.jsonl").read_text().splitlines()]
    answers = [m for m in stored if m["role"] == "assistant"]
    assert [(a["meta"]["provider"], a["meta"]["failover_from"]) for a in answers] == [("spare", "primary")] * 2


def test_an_unknown_model_fails_over_at_once(tmg, llm):
    with MockLLM() as primary:
        primary.enqueue(HttpError(404))  # OpenAI's "The model `primary-model` does not exist ..."
        llm.enqueue(Text("The spare knows its model."))
        two_providers(tmg, primary)
        r = tmg.run("-r", "hello")
        assert r.code == 0, r.err
        assert r.out == "The spare knows its model.\n"
        assert len(primary.requests) == 1  # not retried
    (said,) = [line for line in r.err.splitlines() if "failing over" in line]
    assert said.startswith("tmg: provider primary failed (provider 'primary' does not know model "
                           "'openai/primary-model' (HTTP 404)")
