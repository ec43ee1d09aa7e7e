"""Error classification shared by both backends: statuses, wordings, Retry-After, secrets."""

from __future__ import annotations

import email.utils
import time

import pytest

from tmg.llm import classify
from tmg.llm.gateway import ErrorKind, ProviderSpec

P = ProviderSpec("acme", "openai/gpt-x", api_key="sk-live-abcdef123456", headers={"X-Key": "hdr-secret-999"})


@pytest.mark.parametrize(
    ("status", "message", "code", "kind"),
    [
        (401, "bad key", None, ErrorKind.AUTH),
        (403, "forbidden", None, ErrorKind.AUTH),
        (429, "slow down", "rate_limit_exceeded", ErrorKind.RATE_LIMIT),
        (400, "anything", "context_length_exceeded", ErrorKind.CONTEXT_OVERFLOW),
        (413, "Request Entity Too Large", None, ErrorKind.CONTEXT_OVERFLOW),
        (400, "Invalid value for 'tools'", None, ErrorKind.TERMINAL),
        (404, "no such model", "model_not_found", ErrorKind.UNKNOWN_MODEL),
        (404, "Not Found", None, ErrorKind.TERMINAL),
        (422, "unprocessable", None, ErrorKind.TERMINAL),
        (408, "timeout", None, ErrorKind.TRANSIENT),
        (500, "oops", None, ErrorKind.TRANSIENT),
        (529, "overloaded", None, ErrorKind.TRANSIENT),
    ],
)
def test_status_classification(status: int, message: str, code: str | None, kind: ErrorKind) -> None:
    err = classify.from_status(P, status, message, code)
    assert err.kind is kind and err.status == status
    assert "acme" in str(err)


@pytest.mark.parametrize(
    "text",
    [
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",  # OpenAI, vLLM
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "prompt is too long: 210000 tokens > 200000 maximum",  # Anthropic
        "The input token count (1200000) exceeds the maximum number of tokens allowed",  # Gemini-ish
        "Input is too long for requested model.",  # Bedrock
    ],
)
def test_overflow_wordings_of_other_servers(text: str) -> None:
    assert classify.from_status(P, 400, text).kind is ErrorKind.CONTEXT_OVERFLOW


def test_auth_message_is_ours_and_never_quotes_the_key() -> None:
    err = classify.from_status(P, 401, "Incorrect API key provided: sk-live-abcdef123456")
    assert str(err) == ("authentication failed for provider 'acme' (HTTP 401): check PROVIDERS.acme.API_KEY "
                        "or the env var it names")


def test_quoted_messages_are_scrubbed_of_secrets() -> None:
    err = classify.from_status(P, 500, "upstream said sk-live-abcdef123456 and hdr-secret-999 are weird")
    assert "sk-live-abcdef123456" not in str(err) and "hdr-secret-999" not in str(err)


def test_provider_message_shapes() -> None:
    assert classify.provider_message('{"error": {"message": "m", "code": "c"}}') == ("m", "c")
    assert classify.provider_message('{"error": "plain"}') == ("plain", None)
    assert classify.provider_message('{"detail": "fastapi style"}') == ("fastapi style", None)
    assert classify.provider_message("<html><h1>502 Bad Gateway</h1></html>") == ("502 Bad Gateway", None)
    assert len(classify.provider_message("x" * 5000)[0]) <= 300


def test_retry_after_forms() -> None:
    assert classify.retry_after({"Retry-After": "7"}) == 7.0
    assert classify.retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert classify.retry_after({}) is None
    assert classify.retry_after({"Retry-After": "soon"}) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    wait = classify.retry_after({"Retry-After": later})
    assert wait is not None and 20 < wait <= 31


def test_rate_limit_keeps_retry_after() -> None:
    err = classify.from_response(P, 429, '{"error": {"message": "x"}}', {"Retry-After": "3"})
    assert err.kind is ErrorKind.RATE_LIMIT and err.retry_after == 3.0 and err.retryable


def test_in_stream_errors() -> None:
    assert classify.in_stream(P, "server exploded", "server_error").kind is ErrorKind.TRANSIENT
    assert classify.in_stream(P, "maximum context length is 10", None).kind is ErrorKind.CONTEXT_OVERFLOW
    assert classify.in_stream(P, "slow", "rate_limit_exceeded").kind is ErrorKind.RATE_LIMIT
