"""Turning provider failures into :class:`GatewayError` with a sentence a user can act on.

Both backends use these builders, so a 401 reads the same whichever library made the call.
Messages never quote an API key: a provider's own 401 text often echoes part of it, so auth
errors use our wording only, and every quoted provider message is scrubbed of the key.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Mapping

from tmg.llm.gateway import ErrorKind, GatewayError, ProviderSpec

# Wordings of "prompt too long" across OpenAI, vLLM, llama.cpp, Anthropic, Gemini and others.
_OVERFLOW = re.compile(
    r"maximum context length|context[ _-]length[ _-]exceeded|context window|"
    r"exceeds? (?:the )?(?:available |model'?s? )?context|prompt is too long|input is too long|"
    r"too many (?:input )?tokens|reduce the length of the messages|exceed_context_size|"
    r"input token count.{0,40}exceeds",
    re.IGNORECASE,
)
_VALIDATION = re.compile(r"\bvalidation errors?\b", re.IGNORECASE)
_MAX_QUOTE = 300


def is_overflow_text(text: str) -> bool:
    """Whether a provider's error text says the prompt is too long for the model."""
    return bool(_OVERFLOW.search(text))


def provider_message(body: str) -> tuple[str, str | None]:
    """The human part of an error body and its code: OpenAI's ``{"error": {...}}`` or plain text."""
    try:
        data = json.loads(body)
    except ValueError:
        return _one_line(re.sub(r"<[^>]+>", " ", body)), None  # plain text or an HTML error page
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        message = err.get("message") or err.get("detail") or err.get("msg") or json.dumps(err)
        code = err.get("code") if isinstance(err.get("code"), str) else None
        return _one_line(str(message)), code or (err.get("type") if isinstance(err.get("type"), str) else None)
    return _one_line(str(err)), None


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    lower = {k.lower(): v for k, v in headers.items()}
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = lower.get(key)
        if not value:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            continue
        return max(0.0, when.timestamp() - time.time())
    return None


def from_status(
    provider: ProviderSpec, status: int, message: str, code: str | None = None,
    wait: float | None = None,
) -> GatewayError:
    """Classify an HTTP error status (with the provider's message and error code)."""
    name, msg = provider.name, scrub(message, provider).rstrip(".")
    if status == 401:
        return GatewayError(ErrorKind.AUTH, (
            f"authentication failed for provider '{name}' (HTTP 401): check PROVIDERS.{name}.API_KEY "
            "or the env var it names"), status=status)
    if status == 403:
        return GatewayError(ErrorKind.AUTH, (
            f"access denied by provider '{name}' (HTTP 403): {msg}; check PROVIDERS.{name}.API_KEY "
            f"and that the key may use model '{provider.model}'"), status=status)
    if status == 429:
        return GatewayError(ErrorKind.RATE_LIMIT, f"rate limited by provider '{name}' (HTTP 429): {msg}",
                            status=status, retry_after=wait)
    if status == 413 or (400 <= status < 500 and (code == "context_length_exceeded" or is_overflow_text(msg))):
        return overflow(provider, msg, status)
    if status >= 500 and _VALIDATION.search(msg):
        # A request-validation failure some servers (llama-cpp-python) send as 500: the same
        # request fails the same way every time, so it is not retried.
        return GatewayError(ErrorKind.TERMINAL, f"provider '{name}' rejected the request as invalid "
                            f"(HTTP {status}): {msg}", status=status)
    if status in (408, 409) or status >= 500:
        return GatewayError(ErrorKind.TRANSIENT, f"provider '{name}' failed (HTTP {status}): {msg}",
                            status=status, retry_after=wait)
    hint = ""
    if status == 404:
        hint = f"; check PROVIDERS.{name}.MODEL ('{provider.model}') and PROVIDERS.{name}.URL"
    return GatewayError(ErrorKind.TERMINAL, f"provider '{name}' rejected the request (HTTP {status}): {msg}{hint}",
                        status=status)


def from_response(provider: ProviderSpec, status: int, body: str, headers: Mapping[str, str]) -> GatewayError:
    message, code = provider_message(body)
    return from_status(provider, status, message or f"HTTP {status}", code, retry_after(headers))


def overflow(provider: ProviderSpec, message: str, status: int | None = None) -> GatewayError:
    return GatewayError(ErrorKind.CONTEXT_OVERFLOW, (
        f"the conversation is too long for model '{provider.model}' (provider '{provider.name}'): "
        f"{scrub(message, provider)}"), status=status)


def unreachable(provider: ProviderSpec, detail: str) -> GatewayError:
    where = provider.api_base or "its default URL"
    return GatewayError(ErrorKind.TRANSIENT, f"cannot reach provider '{provider.name}' at {where}: {_one_line(detail)}")


def timed_out(provider: ProviderSpec, seconds: float) -> GatewayError:
    return GatewayError(ErrorKind.TRANSIENT, f"provider '{provider.name}' sent nothing for {seconds:g} s (timed out)")


def dropped(provider: ProviderSpec, detail: str) -> GatewayError:
    return GatewayError(ErrorKind.TRANSIENT, (
        f"the connection to provider '{provider.name}' broke off mid-answer: {_one_line(detail)}"))


def empty_stream(provider: ProviderSpec) -> GatewayError:
    return GatewayError(ErrorKind.EMPTY_STREAM, (
        f"provider '{provider.name}' answered with an empty stream (no data at all); servers such as "
        "llama.cpp do this when the prompt is longer than the model's context window"))


def malformed(provider: ProviderSpec, detail: str) -> GatewayError:
    return GatewayError(ErrorKind.TRANSIENT, (
        f"provider '{provider.name}' sent a malformed stream (is PROVIDERS.{provider.name}.URL an "
        f"OpenAI-compatible endpoint?): {_one_line(detail)}"))


def in_stream(provider: ProviderSpec, message: str, code: str | None) -> GatewayError:
    """An ``{"error": ...}`` event inside a stream: the provider failed after answering 200."""
    msg = scrub(message, provider)
    if code == "context_length_exceeded" or is_overflow_text(msg):
        return overflow(provider, msg)
    if code in ("rate_limit_exceeded", "rate_limit_error"):
        return GatewayError(ErrorKind.RATE_LIMIT, f"rate limited by provider '{provider.name}': {msg}")
    return GatewayError(ErrorKind.TRANSIENT, f"provider '{provider.name}' failed mid-answer: {msg}")


def unsendable(provider: ProviderSpec) -> GatewayError:
    """HTTP refused to send the request's headers (httpx's LocalProtocolError, or a
    UnicodeEncodeError): a setting to fix, never a broken connection to retry. The exception's
    own text quotes the offending header, the key with it, so it is not shown."""
    name = provider.name
    return GatewayError(ErrorKind.TERMINAL, (
        f"cannot send a request to provider '{name}': its API key or a header value is not a valid "
        f"HTTP header (a line break or non-ASCII character); fix PROVIDERS.{name}.API_KEY or "
        f"PROVIDERS.{name}.HEADERS, or the variable they come from"))


def scrub(text: str, provider: ProviderSpec) -> str:
    """Drop the API key (and header values), in every form a message may quote them, from
    text that will be shown or logged."""
    from tmg.redaction import make_redactor

    return _one_line(make_redactor((provider.api_key or "", *provider.headers.values()))(text))


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_QUOTE else text[: _MAX_QUOTE - 1] + "…"
