"""FAILOVER_ORDER: a provider that fails after its retries hands the prompt to the next one
(issue 12, item 14); an auth failure does not."""

from __future__ import annotations

import json

from e2e.mock_llm import HttpError, MockLLM, Text


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
