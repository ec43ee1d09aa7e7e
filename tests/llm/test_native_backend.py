"""What only the native backend does: parse SSE itself, tolerate sloppy servers, price answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from e2e.mock_llm import MockLLM, RawResponse, Text
from tmg.llm.gateway import Completion, CompletionRequest, ErrorKind, GatewayError, ProviderSpec
from tmg.llm.openai_compat import DEFAULT_API_BASE, OpenAICompatGateway, wire_model

USER = [{"role": "user", "content": "hi"}]


def _sse(*events: Any, done: bool = True, sep: str = "\n") -> RawResponse:
    """A hand-written event stream: dicts become ``data:`` events, strings go out verbatim."""
    body = "".join(f"data: {json.dumps(e)}{sep}{sep}" if isinstance(e, dict) else e for e in events)
    body += f"data: [DONE]{sep}{sep}" if done else ""
    return RawResponse(200, body, content_type="text/event-stream")


def _delta(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


async def _run(llm: MockLLM, model: str = "openai/mock") -> tuple[Completion, list[str]]:
    provider = ProviderSpec("local", model, api_key="k", api_base=llm.url, backend="native")
    gateway = OpenAICompatGateway(provider)
    deltas: list[str] = []
    try:
        return await gateway.complete(CompletionRequest(provider, USER), deltas.append), deltas
    finally:
        await gateway.aclose()


@pytest.fixture
def llm() -> Any:
    with MockLLM() as mock:
        yield mock


def test_wire_model_drops_only_the_openai_routing_prefix() -> None:
    assert wire_model("openai/gpt-4o-mini") == "gpt-4o-mini"
    assert wire_model("openai/meta-llama/Llama-3-8B") == "meta-llama/Llama-3-8B"
    assert wire_model("llama3") == "llama3"
    assert DEFAULT_API_BASE == "https://api.openai.com/v1"


async def test_sse_comments_event_lines_crlf_and_multiline_data(llm: MockLLM) -> None:
    multiline = 'data: {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",\r\n' \
                'data: "choices": [{"index": 0, "delta": {"content": "two"}, "finish_reason": null}]}\r\n\r\n'
    llm.enqueue(_sse(": keep-alive\r\n\r\n", "event: message\r\n", _delta({"role": "assistant", "content": "one "}),
                     multiline, _delta({}, "stop"), sep="\r\n"))
    completion, deltas = await _run(llm)
    assert deltas == ["one ", "two"] and completion.text == "one two"


async def test_tool_call_fragments_without_index_or_id_still_assemble(llm: MockLLM) -> None:
    llm.enqueue(_sse(
        _delta({"tool_calls": [{"function": {"name": "list_dir", "arguments": '{"pa'}}]}),
        _delta({"tool_calls": [{"function": {"arguments": 'th": "."}'}}]}),
        _delta({}, "tool_calls"),
    ))
    completion, _ = await _run(llm)
    (call,) = completion.tool_calls
    assert call.name == "list_dir" and json.loads(call.arguments) == {"path": "."}
    assert call.id  # an answer to the call needs some id


async def test_missing_usage_means_zero_tokens_and_no_cost(llm: MockLLM) -> None:
    llm.enqueue(_sse(_delta({"content": "hi"}), _delta({}, "stop")))
    completion, _ = await _run(llm, model="openai/gpt-4o-mini")
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.usage.cost) == (0, 0, None)


async def test_server_that_ignores_stream_gets_one_json_answer(llm: MockLLM) -> None:
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "whole"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}
    llm.enqueue(RawResponse(200, json.dumps(body), content_type="application/json"))
    completion, deltas = await _run(llm)
    assert deltas == ["whole"] and completion.text == "whole" and completion.usage.prompt_tokens == 3


@pytest.mark.parametrize(
    "reply",
    [
        RawResponse(200, "<html>login page</html>"),  # a captive portal or a wrong URL
        RawResponse(200, "data: [1, 2]\n\n", content_type="text/event-stream"),
    ],
    ids=["html", "not-an-object"],
)
async def test_non_openai_bodies_are_malformed(llm: MockLLM, reply: RawResponse) -> None:
    llm.enqueue(reply)
    with pytest.raises(GatewayError, match="malformed") as info:
        await _run(llm)
    assert info.value.kind is ErrorKind.TRANSIENT


async def test_stream_that_ends_early_is_transient(llm: MockLLM) -> None:
    llm.enqueue(_sse(_delta({"content": "half"}), done=False))
    with pytest.raises(GatewayError, match="before the answer was complete") as info:
        await _run(llm)
    assert info.value.kind is ErrorKind.TRANSIENT


async def test_invalid_url_is_terminal_and_names_the_key() -> None:
    provider = ProviderSpec("local", "openai/mock", api_base="ftp://example.invalid/v1", backend="native")
    with pytest.raises(GatewayError, match="PROVIDERS.local.URL") as info:
        await OpenAICompatGateway(provider).complete(CompletionRequest(provider, USER), lambda _: None)
    assert info.value.kind is ErrorKind.TERMINAL


async def test_no_api_key_sends_no_authorization(llm: MockLLM) -> None:
    llm.enqueue(Text("ok"))
    provider = ProviderSpec("local", "llama3", api_base=llm.url)
    gateway = OpenAICompatGateway(provider)
    await gateway.complete(CompletionRequest(provider, USER), lambda _: None)
    await gateway.aclose()
    assert "authorization" not in llm.requests[0].headers
    assert llm.requests[0]["model"] == "llama3"

