"""The native backend: OpenAI-compatible chat completions over httpx, streamed.

Why it exists: ``import litellm`` costs 4 to 6 s of CPU on a small machine, longer than a
whole one-shot of comparable CLIs. Most providers (OpenAI, OpenRouter, Groq, vLLM, llama.cpp,
Ollama's ``/v1``, LM Studio) speak this one API, so for them this module does the call with
httpx alone. It must never import litellm or openai.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

from tmg import __version__
from tmg.llm import classify, pricing
from tmg.llm.http import httpx
from tmg.llm.stall import StallGuard
from tmg.llm.gateway import (
    Completion,
    CompletionRequest,
    DeltaSink,
    ErrorKind,
    GatewayError,
    ProviderSpec,
    ToolCallRequest,
    Usage,
)

DEFAULT_API_BASE = "https://api.openai.com/v1"
_CONNECT_TIMEOUT = 15.0


def wire_model(model: str) -> str:
    """The model name the endpoint expects: litellm's ``openai/`` routing prefix removed."""
    return model[len("openai/"):] if model.startswith("openai/") else model


class OpenAICompatGateway:
    """A :class:`~tmg.llm.gateway.ModelGateway` for any OpenAI-compatible endpoint.

    One pooled ``httpx.AsyncClient`` serves every call; it is rebuilt if the event loop
    changes (a pooled connection belongs to the loop that opened it).
    """

    def __init__(self, provider: ProviderSpec | None = None, *, client: httpx.AsyncClient | None = None) -> None:
        self.provider = provider
        self._client = client
        self._owns_client = client is None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def complete(self, request: CompletionRequest, on_text: DeltaSink) -> Completion:
        provider = request.provider
        url = (provider.api_base or DEFAULT_API_BASE).rstrip("/") + "/chat/completions"
        guard = StallGuard(provider, request.first_byte_wait, request.timeout)
        # Reads are bounded by the guard (first byte, then each gap), not by httpx.
        timeout = httpx.Timeout(None, connect=min(request.first_byte_wait, _CONNECT_TIMEOUT))
        try:
            headers = httpx.Headers(_headers(provider))  # encoded here: a non-ASCII value fails now
        except UnicodeEncodeError:
            raise classify.unsendable(provider) from None  # its text would quote the key
        try:
            async with guard.watching(), self._http().stream(
                "POST", url, json=_body(request), headers=headers, timeout=timeout
            ) as response:
                guard.tick()
                if response.status_code >= 400:
                    await response.aread()
                    raise classify.from_response(provider, response.status_code, response.text, response.headers)
                stream = _Stream()
                await stream.consume(response, provider, on_text, guard.tick)
        except GatewayError:
            raise
        except httpx.LocalProtocolError:
            # Our own request is unsendable (a header h11 refuses): no retry can help.
            raise classify.unsendable(provider) from None
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise classify.unreachable(provider, str(exc) or type(exc).__name__) from exc
        except httpx.TimeoutException as exc:
            raise classify.timed_out(provider, request.timeout) from exc
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise GatewayError(
                ErrorKind.TERMINAL,
                f"PROVIDERS.{provider.name}.URL is not a usable URL ({url}): {exc}",
            ) from exc
        except httpx.TransportError as exc:  # reset, EOF mid-body, incomplete chunked read
            raise classify.dropped(provider, str(exc) or type(exc).__name__) from exc
        return stream.completion(provider.model)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._owns_client:
            await client.aclose()

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or (self._owns_client and self._loop is not loop):
            # The old client's connections belong to a finished loop; it cannot be closed from here.
            self._client = httpx.AsyncClient(
                headers={"User-Agent": f"tmg/{__version__}"}, follow_redirects=False,
                limits=httpx.Limits(max_keepalive_connections=4, keepalive_expiry=60),
            )
            self._owns_client, self._loop = True, loop
        return self._client


def _body(request: CompletionRequest) -> dict[str, Any]:
    provider = request.provider
    body: dict[str, Any] = {
        "model": wire_model(provider.model),
        "messages": request.messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = request.tools
    if provider.max_tokens:
        body["max_tokens"] = provider.max_tokens
    return body


def _headers(provider: ProviderSpec) -> dict[str, str]:
    headers = {"Accept": "text/event-stream"}
    if provider.api_key:
        headers["Authorization"] = f"Bearer {provider.api_key}"
    headers.update(provider.headers)  # configured HEADERS win, e.g. a gateway's own auth header
    return headers


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _Stream:
    """Assembles one streamed answer: text deltas, tool-call fragments by index, usage."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, _PartialCall] = {}
        self.usage: dict[str, Any] = {}
        self.finish_reason: str | None = None
        self.done = False
        self.events = 0

    async def consume(self, response: httpx.Response, provider: ProviderSpec, on_text: DeltaSink,
                      tick: Callable[[], None] = lambda: None) -> None:
        content_type = response.headers.get("content-type", "")
        if "application/json" in content_type:  # a server that ignores "stream": one JSON answer
            await response.aread()
            self._add_whole(_parse(response.text, provider), provider, on_text)
            self.done = True
            return
        if "text/event-stream" not in content_type:
            await response.aread()
            # An HTML page (a proxy's error, a login portal) is quoted as text, not markup.
            raise classify.malformed(provider, f"expected an event stream, got {content_type or 'no content type'}: "
                                     f"{classify.provider_message(response.text)[0][:120]!r}")
        async for data in _sse_data(response, tick):
            self.events += 1
            if data == "[DONE]":
                self.done = True
                return
            self._add_chunk(_parse(data, provider), provider, on_text)
            tick()  # again after on_text: a reader slow to take the text is not a silent provider
        if not self.events:  # not a drop mid-answer: the server never started one
            raise classify.empty_stream(provider)
        if self.finish_reason is None:  # ended cleanly but early: as good as a drop
            raise classify.dropped(provider, "the stream ended before the answer was complete")

    def _add_chunk(self, chunk: dict[str, Any], provider: ProviderSpec, on_text: DeltaSink) -> None:
        if "error" in chunk and chunk["error"]:
            message, code = classify.provider_message(json.dumps(chunk))
            raise classify.in_stream(provider, message, code)
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content:
                self.text.append(content)
                on_text(content)
            for position, frag in enumerate(delta.get("tool_calls") or ()):
                self._add_call_fragment(frag, position)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def _add_call_fragment(self, frag: dict[str, Any], position: int) -> None:
        index = frag.get("index", position)  # a few servers omit the index
        call = self.calls.setdefault(index, _PartialCall())
        call.id = call.id or frag.get("id") or ""
        function = frag.get("function") or {}
        call.name = call.name or function.get("name") or ""  # OpenAI never splits a name
        if function.get("arguments"):
            call.arguments.append(function["arguments"])

    def _add_whole(self, body: dict[str, Any], provider: ProviderSpec, on_text: DeltaSink) -> None:
        if body.get("error"):
            message, code = classify.provider_message(json.dumps(body))
            raise classify.in_stream(provider, message, code)
        self.usage = body.get("usage") or {}
        choice = (body.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        if message.get("content"):
            self.text.append(message["content"])
            on_text(message["content"])
        for i, call in enumerate(message.get("tool_calls") or ()):
            function = call.get("function") or {}
            self.calls[i] = _PartialCall(call.get("id") or "", function.get("name") or "",
                                         [function.get("arguments") or ""])
        self.finish_reason = choice.get("finish_reason")

    def completion(self, model: str) -> Completion:
        calls = [
            # An id is needed to answer the call; "{}" is what OpenAI sends for no arguments.
            ToolCallRequest(c.id or f"call_{i}", c.name, "".join(c.arguments) or "{}")
            for i, c in sorted(self.calls.items())
        ]
        prompt = int(self.usage.get("prompt_tokens") or 0)
        completion = int(self.usage.get("completion_tokens") or 0)
        cost = pricing.cost(model, prompt, completion) if self.usage else None
        usage = Usage(prompt, completion, cost, reported=bool(self.usage))
        return Completion("".join(self.text), calls, usage, self.finish_reason)


def _parse(data: str, provider: ProviderSpec) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except ValueError:
        raise classify.malformed(provider, f"not JSON: {data[:120]!r}") from None
    if not isinstance(obj, dict):
        raise classify.malformed(provider, f"not a JSON object: {data[:120]!r}")
    return obj


async def _sse_data(response: httpx.Response, tick: Callable[[], None]) -> AsyncIterator[str]:
    """The ``data`` of each server-sent event (multi-line data joined, comments skipped).

    ``tick`` is called per line: a keep-alive comment counts as the provider being alive."""
    lines: list[str] = []
    async for line in response.aiter_lines():
        tick()
        if not line:
            if lines:
                yield "\n".join(lines)
                lines = []
            continue
        if line.startswith("data:"):
            value = line[5:]
            lines.append(value[1:] if value.startswith(" ") else value)
        # "event:", "id:", "retry:" and ": comment" lines carry nothing a chat answer needs
    if lines:
        yield "\n".join(lines)

