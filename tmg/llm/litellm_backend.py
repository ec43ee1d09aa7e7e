"""The litellm backend: every provider litellm knows (Anthropic, Gemini, Bedrock, ...).

litellm is imported on first use, never at module import: it costs seconds of CPU. Two traps
are disarmed before that import: the price map it would fetch from the internet (and warn
about on stdout seconds later), and its "Provider List" debug lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
import warnings
from types import ModuleType
from typing import Any, AsyncIterator

from tmg.llm import classify
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

_lock = threading.Lock()
_litellm: ModuleType | None = None


def load_litellm() -> ModuleType:
    """Import litellm once, configured for a terminal app (safe to call from any thread)."""
    global _litellm
    with _lock:  # a prewarm thread may be importing it right now: wait for it, do not race
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            # Its pydantic deprecation warnings are litellm's to fix, not the user's to read.
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"litellm(\.|$)")
            _litellm = litellm
    return _litellm


async def load_litellm_async() -> ModuleType:
    """:func:`load_litellm` for the event loop: the import (or the wait for a prewarm thread
    that holds the import) runs on a worker thread, so Ctrl-C, the memory server's start and
    notices keep running meanwhile instead of stalling for seconds."""
    if _litellm is not None:
        return _litellm
    return await asyncio.to_thread(load_litellm)


class LiteLLMGateway:
    """A :class:`~tmg.llm.gateway.ModelGateway` over ``litellm.acompletion``, streamed."""

    def __init__(self, provider: ProviderSpec | None = None) -> None:
        self.provider = provider

    async def complete(self, request: CompletionRequest, on_text: DeltaSink) -> Completion:
        litellm = await load_litellm_async()
        provider = request.provider
        chunks: list[Any] = []
        guard = StallGuard(provider, request.first_byte_wait, request.timeout)
        async with guard.watching(), contextlib.aclosing(_stream(litellm, request)) as stream:
            async for chunk in stream:
                guard.tick()
                chunks.append(chunk)
                choices = getattr(chunk, "choices", None)
                content = choices[0].delta.content if choices else None
                if content:
                    on_text(content)  # outside _stream: a failing sink is not a provider failure
                    guard.tick()
        if not chunks:
            raise classify.empty_stream(provider)
        built = litellm.stream_chunk_builder(chunks, messages=request.messages)
        return _completion(litellm, built, provider)

    async def aclose(self) -> None:
        pass  # litellm owns and caches its HTTP clients


async def _stream(litellm: ModuleType, request: CompletionRequest) -> AsyncIterator[Any]:
    """Yield litellm's chunks; every litellm failure leaves as a classified GatewayError."""
    provider = request.provider
    kwargs: dict[str, Any] = {
        "model": provider.model,
        "messages": request.messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "num_retries": 0,  # retries belong to the engine's Recovering phase
        # The StallGuard bounds the first byte and each gap; litellm's own bound is a backstop.
        "timeout": max(request.timeout, request.first_byte_wait) + 5.0,
    }
    if request.tools:
        kwargs["tools"] = request.tools
    if provider.api_key:
        kwargs["api_key"] = provider.api_key
    if provider.api_base:
        kwargs["api_base"] = provider.api_base
    if provider.max_tokens:
        kwargs["max_tokens"] = provider.max_tokens
    if provider.headers:
        kwargs["extra_headers"] = dict(provider.headers)
    stream = None
    try:
        try:
            stream = await litellm.acompletion(**kwargs)
            async for chunk in stream:
                yield chunk
        except Exception as exc:  # noqa: BLE001 - litellm raises many unrelated classes
            raise classify_exception(exc, provider, request.timeout) from exc
    finally:
        if stream is not None and hasattr(stream, "aclose"):
            await stream.aclose()  # closes the HTTP stream, also when the task is cancelled


def _completion(litellm: ModuleType, built: Any, provider: ProviderSpec) -> Completion:
    choice = built.choices[0] if built.choices else None
    message = getattr(choice, "message", None)
    calls = [
        ToolCallRequest(c.id or f"call_{i}", c.function.name or "", c.function.arguments or "{}")
        for i, c in enumerate(getattr(message, "tool_calls", None) or [])
    ]
    usage = getattr(built, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    try:
        cost: float | None = float(litellm.completion_cost(completion_response=built, model=provider.model))
    except Exception:  # noqa: BLE001 - ModelNotMappedError for local models, and worse
        cost = None
    text = getattr(message, "content", None) or ""
    return Completion(text, calls, Usage(prompt, completion, cost), getattr(choice, "finish_reason", None))


# httpx and aiohttp (litellm's default transport) names for a connection that broke.
_TRANSPORT_ERRORS = {"TransportError", "ReadError", "RemoteProtocolError", "ClientPayloadError",
                     "ServerDisconnectedError", "ClientConnectionError"}


# httpx (h11) and aiohttp refusing to send a header; litellm reports aiohttp's as an HTTP 500.
_UNSENDABLE = re.compile(r"Forbidden control character detected in headers|Illegal header (?:value|name)")


def classify_exception(exc: BaseException, provider: ProviderSpec, timeout: float = 0.0) -> GatewayError:
    """Map a litellm (or openai, or httpx) exception to a GatewayError."""
    if isinstance(exc, GatewayError):
        return exc
    names = {cls.__name__ for cls in type(exc).__mro__}
    message = _strip_prefixes(str(getattr(exc, "message", None) or exc))
    status = getattr(exc, "status_code", None)
    causes = _cause_names(exc)
    if (names | causes) & {"LocalProtocolError", "UnicodeEncodeError"} or _UNSENDABLE.search(message):
        return classify.unsendable(provider)  # a header HTTP cannot send: not a connection to retry
    if "ContextWindowExceededError" in names:
        return classify.overflow(provider, message, status)
    if "MidStreamFallbackError" in names:  # any failure after the stream started
        if "JSONDecodeError" in causes:
            return classify.malformed(provider, message)
        if causes & _TRANSPORT_ERRORS:
            return classify.dropped(provider, message)
        return classify.in_stream(provider, message, None)
    if "Timeout" in names or causes & {"ReadTimeout", "APITimeoutError"}:
        return classify.timed_out(provider, timeout)
    if causes & {"ConnectError", "ConnectTimeout"} or "APIConnectionError" in names:
        return classify.unreachable(provider, message)  # litellm calls a refused connection a 500
    if isinstance(status, int) and status >= 400:
        return classify.from_status(provider, status, message, None, _retry_after(exc))
    if "JSONDecodeError" in names | causes:
        return classify.malformed(provider, message)
    return GatewayError(ErrorKind.TERMINAL, f"provider '{provider.name}' failed: {type(exc).__name__}: "
                        f"{classify.scrub(message, provider)}")


def _retry_after(exc: BaseException) -> float | None:
    for headers in (getattr(getattr(exc, "response", None), "headers", None),
                    getattr(exc, "litellm_response_headers", None)):
        if headers:
            wait = classify.retry_after(dict(headers))
            if wait is not None:
                return wait
    return None


def _cause_names(exc: BaseException) -> set[str]:
    """Class names along the cause chain (and litellm's ``original_exception`` links)."""
    names: set[str] = set()
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc.__cause__, exc.__context__, getattr(exc, "original_exception", None)]
    while todo:
        cur = todo.pop()
        if cur is None or id(cur) in seen or not isinstance(cur, BaseException):
            continue
        seen.add(id(cur))
        names.update(cls.__name__ for cls in type(cur).__mro__)
        todo += [cur.__cause__, cur.__context__, getattr(cur, "original_exception", None)]
    return names


def _strip_prefixes(message: str) -> str:
    """``litellm.X: X: OpenAIException - the real message`` -> ``the real message``."""
    _, sep, tail = message.partition("Exception - ")
    message = tail if sep else message
    message = message.split(" Original exception:")[0]
    if message.startswith("{"):
        message = classify.provider_message(message)[0] or message
    return message.strip() or "no details"
