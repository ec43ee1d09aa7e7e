"""What ``tmg doctor`` calls for each kind of provider: a free endpoint, the key in a header."""

from __future__ import annotations

import pytest

from tmg.llm.gateway import ProviderSpec
from tmg.llm.probe import probe_target


@pytest.mark.parametrize("model, url, key_header", [
    ("openai/gpt-4.1-mini", "https://api.openai.com/v1/models", "Authorization"),
    ("anthropic/claude-sonnet-4-5", "https://api.anthropic.com/v1/models", "x-api-key"),
    ("gemini/gemini-2.5-flash", "https://generativelanguage.googleapis.com/v1beta/models", "x-goog-api-key"),
    ("openrouter/anthropic/claude-sonnet-4.5", "https://openrouter.ai/api/v1/key", "Authorization"),
])
def test_each_known_provider_has_a_tokenless_endpoint_and_the_key_stays_out_of_the_url(model, url, key_header):
    target = probe_target(ProviderSpec(name="p", model=model, api_key="sk-secret-1234"))
    assert target is not None
    got_url, headers, _lists = target
    assert got_url == url and "sk-secret-1234" not in got_url
    assert "sk-secret-1234" in headers[key_header]


def test_an_unknown_provider_without_a_url_is_not_contacted():
    assert probe_target(ProviderSpec(name="p", model="bedrock/some-model", api_key="k")) is None
    assert probe_target(ProviderSpec(name="p", model="ollama/llama3", api_base="http://127.0.0.1:11434"))[0] == \
        "http://127.0.0.1:11434"
