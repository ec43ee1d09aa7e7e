"""Asking a provider whether it is there, without spending a token (``tmg doctor``).

One cheap GET per provider with a short timeout: the model list of OpenAI-compatible endpoints,
Anthropic and Gemini (the key is checked too: a wrong key is a 401 there). For a provider with
no such endpoint, its URL is contacted when it has one; otherwise it is not contacted, and said so.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from tmg.llm.classify import provider_message, scrub
from tmg.llm.gateway import ProviderSpec

PROBE_TIMEOUT = 5.0  # seconds: doctor is for a human waiting at a terminal
_ANTHROPIC_BASE = "https://api.anthropic.com/v1"
_GEMINI_BASE = "https://generativelanguage.googleapis.com/v1beta"
_OPENROUTER_BASE = "https://openrouter.ai/api/v1"


@dataclass(frozen=True)
class ProbeResult:
    status: str  # ok, warn, FAIL or skip (as doctor's verdicts)
    detail: str


def probe_target(provider: ProviderSpec) -> tuple[str, dict[str, str], bool] | None:
    """``(url, headers, lists_models)`` to GET for ``provider``, or None when there is no cheap call."""
    from tmg.llm.select import backend_for

    model = provider.model
    if backend_for(provider) == "native":
        from tmg.llm.openai_compat import DEFAULT_API_BASE, _headers

        base = (provider.api_base or DEFAULT_API_BASE).rstrip("/")
        return f"{base}/models", {**_headers(provider), "Accept": "application/json"}, True
    headers = dict(provider.headers)
    if model.startswith("anthropic/"):
        if provider.api_key:
            headers.setdefault("x-api-key", provider.api_key)
        headers.setdefault("anthropic-version", "2023-06-01")
        return f"{(provider.api_base or _ANTHROPIC_BASE).rstrip('/')}/models", headers, True
    if model.startswith("gemini/"):
        if provider.api_key:
            headers.setdefault("x-goog-api-key", provider.api_key)  # a header: never in a URL we print
        return f"{(provider.api_base or _GEMINI_BASE).rstrip('/')}/models", headers, True
    if model.startswith("openrouter/"):  # its key endpoint checks the key, for free
        if provider.api_key:
            headers.setdefault("Authorization", f"Bearer {provider.api_key}")
        return f"{(provider.api_base or _OPENROUTER_BASE).rstrip('/')}/key", headers, False
    if provider.api_base:
        return provider.api_base, headers, False
    return None


async def probe(provider: ProviderSpec, timeout: float = PROBE_TIMEOUT) -> ProbeResult:
    """Contact ``provider`` once; what a user should know about the answer, in one line."""
    from tmg.llm.http import httpx

    target = probe_target(provider)
    if target is None:
        return ProbeResult("skip", f"not contacted: {provider.model} has no call tmg can make without "
                                   "spending tokens; the first prompt will tell")
    url, headers, lists_models = target
    key = f"PROVIDERS.{provider.name}"
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
            response = await client.get(url, headers=headers)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        why = scrub(str(exc) or type(exc).__name__, provider)
        return ProbeResult("FAIL", f"cannot reach {url} ({why}); is the server running? check {key}.URL")
    except httpx.TimeoutException:
        return ProbeResult("FAIL", f"no answer from {url} within {timeout:g} s; check {key}.URL")
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        return ProbeResult("FAIL", f"{url} is not a usable URL ({exc}); fix {key}.URL")
    except httpx.HTTPError as exc:
        return ProbeResult("FAIL", f"{url} broke off ({scrub(str(exc) or type(exc).__name__, provider)})")
    code = response.status_code
    if code in (401, 403):
        return ProbeResult("FAIL", f"{url} refused the API key (HTTP {code}); check {key}.API_KEY")
    if not lists_models:
        if code >= 400 and url != provider.api_base:  # an API endpoint, not just a base URL
            return ProbeResult("FAIL", f"{url} answered HTTP {code}: {scrub(provider_message(response.text)[0], provider)[:160]}")
        return ProbeResult("ok", f"{url} answered (HTTP {code})")
    if code >= 400:
        if code in (404, 405):  # a compatible server without a model list is still there
            return ProbeResult("ok", f"{url} answered (HTTP {code}: no model list to check {provider.model} against)")
        said = scrub(provider_message(response.text)[0], provider)[:160]
        return ProbeResult("FAIL", f"{url} answered HTTP {code}: {said}")
    return _model_listed(response, provider, url)


def _model_listed(response, provider: ProviderSpec, url: str) -> ProbeResult:
    """ok, with a hint when the model list (OpenAI, Anthropic or Gemini shape) lacks the model."""
    try:
        body = response.json()
    except ValueError:
        body = None
    items = (body.get("data") or body.get("models")) if isinstance(body, dict) else None
    ids = {str(m.get("id") or m.get("name") or "").removeprefix("models/")
           for m in items if isinstance(m, dict)} if isinstance(items, list) else set()
    wanted = provider.model.split("/", 1)[1] if "/" in provider.model else provider.model
    if not ids:
        return ProbeResult("ok", f"{url} answered")
    if wanted in ids or provider.model in ids:
        return ProbeResult("ok", f"{url} answered, {wanted} listed")
    shown = ", ".join(sorted(ids)[:5]) + (", ..." if len(ids) > 5 else "")
    # Only a hint: local servers answer to any model name, whatever they list.
    return ProbeResult("ok", f"{url} answered; it does not list {wanted} (it lists {shown}): if the first "
                             f"prompt gets a 404, check PROVIDERS.{provider.name}.MODEL")


async def probe_all(providers: list[ProviderSpec], timeout: float = PROBE_TIMEOUT) -> list[ProbeResult]:
    """Every provider at once, each bounded by ``timeout``; results in order."""
    return list(await asyncio.gather(*(probe(p, timeout) for p in providers)))
