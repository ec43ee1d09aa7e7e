"""The same behaviour from both gateway backends, against a real local OpenAI-compatible server.

Every test runs once on the native httpx backend and once on litellm (``backend`` fixture):
whichever one a provider gets, the engine must see the same stream, tool calls, usage and
classified errors.
"""

from __future__ import annotations

import asyncio
import json
import socket
from dataclasses import replace
from typing import Any

import pytest

from e2e.mock_llm import (
    ContextOverflow,
    DropStream,
    HttpError,
    MalformedStream,
    MockLLM,
    RawResponse,
    Stall,
    StreamError,
    Text,
    ToolCall,
    ToolCalls,
)
from tmg.llm import pricing
from tmg.llm.gateway import Completion, CompletionRequest, ErrorKind, GatewayError, ProviderSpec
from tmg.llm.select import make_gateway

# litellm trips pydantic deprecation warnings inside its own code: noise, not our failure.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:litellm.*")

USER = [{"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                                             "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]


async def _complete(provider: ProviderSpec, messages: list[dict[str, Any]] | None = None,
                    tools: list[dict[str, Any]] | None = None, timeout: float = 30.0) -> tuple[Completion, list[str]]:
    deltas: list[str] = []
    gateway = make_gateway(provider)
    try:
        completion = await gateway.complete(
            CompletionRequest(provider, messages or USER, tools or [], timeout), deltas.append)
    finally:
        await gateway.aclose()
    return completion, deltas


async def _error(provider: ProviderSpec, timeout: float = 30.0) -> GatewayError:
    with pytest.raises(GatewayError) as info:
        await _complete(provider, timeout=timeout)
    return info.value


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- answers ------------------------------------------------------------------------------------


async def test_streamed_text_arrives_in_order(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("The quick brown fox jumps over the lazy dog.", chunks=9))
    completion, deltas = await _complete(provider)
    assert len(deltas) == 9
    assert "".join(deltas) == completion.text == "The quick brown fox jumps over the lazy dog."
    assert completion.tool_calls == [] and completion.finish_reason == "stop"


async def test_streamed_tool_calls_are_assembled(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(ToolCalls(ToolCall("read_file", {"path": "notes/a.txt", "limit": 20}, id="call_A", chunks=6),
                          ToolCall("read_file", {"path": "b.txt"}, id="call_B", chunks=2), text="Reading both."))
    completion, deltas = await _complete(provider, tools=TOOLS)
    assert completion.text == "".join(deltas) == "Reading both."
    assert completion.finish_reason == "tool_calls"
    calls = [(c.id, c.name, json.loads(c.arguments)) for c in completion.tool_calls]
    assert calls == [("call_A", "read_file", {"path": "notes/a.txt", "limit": 20}),
                     ("call_B", "read_file", {"path": "b.txt"})]


async def test_usage_is_reported(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("counted", usage=(123, 45)))
    completion, _ = await _complete(provider)
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (123, 45)
    assert completion.usage.cost is None  # "mock" has no price


async def test_cost_of_a_priced_model_follows_the_price_map(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("priced", usage=(1000, 500)))
    completion, _ = await _complete(replace(provider, model="openai/gpt-4o-mini"))
    entry = json.loads(pricing.price_map_path().read_text())["gpt-4o-mini"]  # type: ignore[union-attr]
    expected = 1000 * entry["input_cost_per_token"] + 500 * entry["output_cost_per_token"]
    assert completion.usage.cost == pytest.approx(expected)


async def test_request_carries_model_messages_tools_and_settings(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("ok"))
    configured = replace(provider, max_tokens=77, headers={"X-Title": "tmg-test"})
    await _complete(configured, tools=TOOLS)
    (req,) = llm.requests
    assert req["model"] == "mock"  # the routing prefix is not part of the wire name
    assert req["messages"] == USER
    assert req["tools"][0]["function"]["name"] == "read_file"
    assert req["max_tokens"] == 77
    assert req["stream"] is True and req["stream_options"] == {"include_usage": True}
    assert req.headers["authorization"] == "Bearer sk-test-secret-123"
    assert req.headers["x-title"] == "tmg-test"


async def test_a_conversation_with_tool_results_round_trips(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(ToolCall("read_file", {"path": "a.txt"}), Text("The file says hi."))
    first, _ = await _complete(provider, tools=TOOLS)
    call = first.tool_calls[0]
    history = [*USER,
               {"role": "assistant", "content": "", "tool_calls": [
                   {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
               {"role": "tool", "tool_call_id": call.id, "content": "hi"}]
    second, _ = await _complete(provider, messages=history, tools=TOOLS)
    assert second.text == "The file says hi."
    assert llm.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": call.id, "content": "hi"}


# -- errors -------------------------------------------------------------------------------------


async def test_auth_error_names_the_provider_and_hides_the_key(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(HttpError(401, message="Incorrect API key provided: sk-test-secret-123."))
    err = await _error(provider)
    assert err.kind is ErrorKind.AUTH and not err.retryable and err.status == 401
    assert "provider 'local'" in str(err) and "PROVIDERS.local.API_KEY" in str(err)
    assert "sk-test-secret-123" not in str(err)


async def test_forbidden_is_an_auth_error(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(HttpError(403))
    err = await _error(provider)
    assert err.kind is ErrorKind.AUTH and "provider 'local'" in str(err)


async def test_rate_limit_carries_retry_after(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(HttpError(429, retry_after=2))
    err = await _error(provider)
    assert err.kind is ErrorKind.RATE_LIMIT and err.retryable
    assert err.retry_after == 2.0


async def test_context_overflow(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(ContextOverflow(limit=8192))
    err = await _error(provider)
    assert err.kind is ErrorKind.CONTEXT_OVERFLOW and not err.retryable
    assert "8192" in str(err) and "too long" in str(err)


@pytest.mark.parametrize("reply", [HttpError(500), HttpError(503), RawResponse(502, "<html>Bad Gateway</html>")],
                         ids=["500", "503", "502-html"])
async def test_server_errors_are_transient(llm: MockLLM, provider: ProviderSpec, reply: Any) -> None:
    llm.enqueue(reply)
    err = await _error(provider)
    assert err.kind is ErrorKind.TRANSIENT and err.retryable


@pytest.mark.parametrize("reply", [HttpError(404, message="Not Found", code="not_found"), HttpError(400, message="Invalid value for 'tools'.")],
                         ids=["404", "400"])
async def test_other_client_errors_are_terminal(llm: MockLLM, provider: ProviderSpec, reply: Any) -> None:
    llm.enqueue(reply)
    err = await _error(provider)
    assert err.kind is ErrorKind.TERMINAL and not err.retryable
    assert "provider 'local'" in str(err)


@pytest.mark.parametrize("reply", [HttpError(404),  # OpenAI's own: "The model `x` does not exist ..."
                                   HttpError(404, message='model "mock" not found, try pulling it first')],
                         ids=["openai", "ollama"])
async def test_an_unknown_model_is_said_as_such_and_not_retried(llm: MockLLM, provider: ProviderSpec, reply: Any) -> None:
    llm.enqueue(reply)
    err = await _error(provider)
    assert err.kind is ErrorKind.UNKNOWN_MODEL and not err.retryable
    assert str(err).startswith("provider 'local' does not know model 'openai/mock' (HTTP 404)")
    assert "PROVIDERS.local.MODEL" in str(err)


async def test_dropped_stream_is_transient(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(DropStream("half an ans", chunks=2))
    err = await _error(provider)
    assert err.kind is ErrorKind.TRANSIENT
    assert llm.wait_outcome(0) == "dropped"


async def test_malformed_stream_is_transient_and_says_so(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(MalformedStream("fine so far"))
    err = await _error(provider)
    assert err.kind is ErrorKind.TRANSIENT and "malformed" in str(err)


async def test_error_event_inside_the_stream_is_transient(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(StreamError("The model is overloaded right now", text="Sta"))
    err = await _error(provider)
    assert err.kind is ErrorKind.TRANSIENT and "overloaded" in str(err)


async def test_refused_connection_is_transient(provider: ProviderSpec) -> None:
    err = await _error(replace(provider, api_base=f"http://127.0.0.1:{_free_port()}/v1"))
    assert err.kind is ErrorKind.TRANSIENT and "provider 'local'" in str(err)


async def test_silent_server_times_out_as_transient(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("too late", delay=30))
    err = await _error(provider, timeout=0.5)
    assert err.kind is ErrorKind.TRANSIENT


async def test_a_stall_before_the_first_byte_and_one_mid_stream_name_their_timeouts(
        llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("warm"), Stall(seconds=30), Stall("the start", seconds=30))
    gateway = make_gateway(provider)
    try:
        # litellm's first call imports its provider clients (seconds, on a loaded machine).
        await gateway.complete(CompletionRequest(provider, USER), lambda _: None)
        for expected, first_byte in (("FIRST_BYTE_TIMEOUT", 0.5), ("STREAM_IDLE_TIMEOUT", 30.0)):
            request = CompletionRequest(provider, USER, [], timeout=0.5, first_byte_timeout=first_byte)
            with pytest.raises(GatewayError) as info:
                await gateway.complete(request, lambda _: None)
            assert info.value.stalled and info.value.kind is ErrorKind.TRANSIENT
            assert expected in str(info.value)
    finally:
        await gateway.aclose()


async def test_a_failing_text_sink_is_not_a_provider_error(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("boom", chunks=2))

    def sink(_: str) -> None:
        raise RuntimeError("the UI broke")

    gateway = make_gateway(provider)
    with pytest.raises(RuntimeError, match="the UI broke"):
        await gateway.complete(CompletionRequest(provider, USER), sink)
    await gateway.aclose()


# -- cancellation and reuse ---------------------------------------------------------------------


async def test_cancelling_closes_the_stream(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("x" * 300, chunks=300, chunk_delay=0.1))  # 30 s unless someone hangs up
    gateway = make_gateway(provider)
    first = asyncio.Event()
    task = asyncio.create_task(gateway.complete(CompletionRequest(provider, USER), lambda _: first.set()))
    await asyncio.wait_for(first.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The server sees the connection end long before the 30 s answer would have.
    assert await asyncio.to_thread(llm.wait_outcome, 0, 10) == "client_closed"
    await gateway.aclose()


async def test_one_gateway_serves_many_calls(llm: MockLLM, provider: ProviderSpec) -> None:
    llm.enqueue(Text("one"), HttpError(500), Text("three"))
    gateway = make_gateway(provider)
    texts = []
    for _ in range(3):
        try:
            texts.append((await gateway.complete(CompletionRequest(provider, USER), lambda _: None)).text)
        except GatewayError as err:
            texts.append(err.kind.value)
    await gateway.aclose()
    assert texts == ["one", "transient", "three"]


def test_a_gateway_survives_a_new_event_loop(llm: MockLLM, provider: ProviderSpec) -> None:
    """The REPL may run each prompt in its own loop; pooled connections must not leak across."""
    llm.enqueue(Text("first"), Text("second"))
    gateway = make_gateway(provider)
    request = CompletionRequest(provider, USER)
    assert asyncio.run(gateway.complete(request, lambda _: None)).text == "first"
    assert asyncio.run(gateway.complete(request, lambda _: None)).text == "second"
    asyncio.run(gateway.aclose())


@pytest.mark.parametrize("key", ["sk-canary-0123456789\n", "sk-canary-01234é56789"])
async def test_a_header_http_cannot_send_is_terminal_and_never_quotes_the_key(
        provider: ProviderSpec, llm: MockLLM, key: str) -> None:
    # The config refuses such keys at load; this is the line of defence behind it. httpx refuses
    # the header (LocalProtocolError, UnicodeEncodeError): no connection broke, a retry cannot help.
    err = await _error(replace(provider, api_key=key))
    assert err.kind is ErrorKind.TERMINAL and not err.retryable
    assert "PROVIDERS.local.API_KEY" in str(err) and "canary" not in str(err)
    assert llm.requests == []
