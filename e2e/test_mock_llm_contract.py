"""The mock LLM speaks OpenAI's wire format: checked with the real openai SDK, not with our code.

Every SSE frame and JSON body the mock emits is validated with the SDK's pydantic types
(rejecting fields those types do not know, so a typo in the mock cannot pass), and the SDK's
own clients and exception mapping must make sense of it. litellm drives it once too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types import ErrorObject
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pydantic import BaseModel

from e2e.mock_llm import (
    BadUtf8Stream,
    Stall,
    ContextOverflow,
    DropStream,
    Echo,
    EmptyStream,
    HttpError,
    MalformedStream,
    MockLLM,
    StreamError,
    Text,
    ToolCall,
    ToolCalls,
)

# litellm trips pydantic deprecation warnings inside its own code: noise, not our failure.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:litellm.*")

USER = [{"role": "user", "content": "hi there"}]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def llm() -> Any:
    with MockLLM() as mock:
        yield mock


@pytest.fixture
def client(llm: MockLLM) -> Any:
    with openai.OpenAI(base_url=llm.url, api_key="x", max_retries=0) as c:
        yield c


def _assert_no_unknown_fields(model: Any, where: str = "") -> None:
    """The SDK's models accept extra keys; a key they do not know is a mock bug."""
    if isinstance(model, BaseModel):
        assert not model.model_extra, f"unknown fields at {where or 'top'}: {model.model_extra}"
        for name in type(model).model_fields:
            _assert_no_unknown_fields(getattr(model, name), f"{where}.{name}")
    elif isinstance(model, list):
        for i, item in enumerate(model):
            _assert_no_unknown_fields(item, f"{where}[{i}]")


def _raw_frames(llm: MockLLM, include_usage: bool = True, **body: Any) -> list[str]:
    payload = {"model": "mock", "messages": USER, "stream": True, **body}
    if include_usage:
        payload["stream_options"] = {"include_usage": True}
    with httpx.stream("POST", llm.url + "/chat/completions", json=payload) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        lines = list(resp.iter_lines())
    assert all(line.startswith("data: ") for line in lines if line), lines
    return [line[len("data: "):] for line in lines if line]


# -- every frame validates -----------------------------------------------------------------------

SUCCESS_REPLIES = [
    Text("hello world, streamed", chunks=5),
    Text(""),
    Echo(prefix="you said: ", chunks=3),
    ToolCall("read_file", {"path": "a.txt"}, chunks=4),
    ToolCalls(ToolCall("a", {"x": 1}), ToolCall("b", "{}"), text="Let me look."),
]


@pytest.mark.parametrize("reply", SUCCESS_REPLIES, ids=lambda r: type(r).__name__)
@pytest.mark.parametrize("include_usage", [True, False])
def test_every_stream_frame_is_a_valid_chunk(llm: MockLLM, reply: Any, include_usage: bool) -> None:
    llm.enqueue(reply)
    frames = _raw_frames(llm, include_usage)
    assert frames[-1] == "[DONE]"
    chunks = [ChatCompletionChunk.model_validate(json.loads(f)) for f in frames[:-1]]
    for chunk in chunks:
        _assert_no_unknown_fields(chunk)
    assert len({c.id for c in chunks}) == 1, "all chunks of one completion share an id"
    finished = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finished) == 1
    if include_usage:
        assert chunks[-1].choices == [] and chunks[-1].usage is not None
        assert all(c.usage is None for c in chunks[:-1])
    else:
        assert all(c.usage is None for c in chunks)


@pytest.mark.parametrize("reply", SUCCESS_REPLIES, ids=lambda r: type(r).__name__)
def test_non_streamed_body_is_a_valid_completion(llm: MockLLM, reply: Any) -> None:
    llm.enqueue(reply)
    resp = httpx.post(llm.url + "/chat/completions", json={"model": "mock", "messages": USER})
    completion = ChatCompletion.model_validate(resp.json())
    _assert_no_unknown_fields(completion)
    assert completion.usage is not None and completion.usage.prompt_tokens > 0


@pytest.mark.parametrize(
    ("reply", "status", "code"),
    [
        (HttpError(401), 401, "invalid_api_key"),
        (HttpError(429, retry_after=3), 429, "rate_limit_exceeded"),
        (HttpError(500), 500, None),
        (ContextOverflow(), 400, "context_length_exceeded"),
    ],
)
def test_error_bodies_are_openai_error_objects(llm: MockLLM, reply: Any, status: int, code: str | None) -> None:
    llm.enqueue(reply)
    resp = httpx.post(llm.url + "/chat/completions", json={"model": "mock", "messages": USER, "stream": True})
    assert resp.status_code == status
    err = ErrorObject.model_validate(resp.json()["error"])
    _assert_no_unknown_fields(err)
    assert err.code == code and err.message


# -- the SDK makes sense of it ------------------------------------------------------------------


def test_sdk_streams_text_in_order_with_usage(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(Text("one two three four", chunks=4, usage=(11, 7)))
    stream = client.chat.completions.create(
        model="mock", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert pieces == ["one t", "wo th", "ree ", "four"]
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (11, 7)


def test_sdk_accumulates_streamed_tool_calls(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(ToolCalls(ToolCall("read_file", {"path": "a.txt"}, id="call_1", chunks=5),
                          ToolCall("list_dir", {}, id="call_2"), text="Looking."))
    with client.chat.completions.stream(model="mock", messages=USER) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert final.choices[0].finish_reason == "tool_calls"
    assert message.content == "Looking."
    calls = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
    assert calls == [("call_1", "read_file", {"path": "a.txt"}), ("call_2", "list_dir", {})]


def test_sdk_reads_non_streamed_tool_call(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(ToolCall("read_file", {"path": "a.txt"}))
    completion = client.chat.completions.create(model="mock", messages=USER)
    call = (completion.choices[0].message.tool_calls or [])[0]
    assert call.id.startswith("call_") and call.function.name == "read_file"
    assert json.loads(call.function.arguments) == {"path": "a.txt"}


async def test_async_sdk_streams(llm: MockLLM) -> None:
    llm.enqueue(Text("async hello", chunks=3))
    async with openai.AsyncOpenAI(base_url=llm.url, api_key="x", max_retries=0) as client:
        stream = await client.chat.completions.create(model="mock", messages=USER, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == "async hello"


@pytest.mark.parametrize(
    ("reply", "exc", "code"),
    [
        (HttpError(401), openai.AuthenticationError, "invalid_api_key"),
        (HttpError(403), openai.PermissionDeniedError, "unsupported_country_region_territory"),
        (HttpError(404), openai.NotFoundError, "model_not_found"),
        (HttpError(429, retry_after=0), openai.RateLimitError, "rate_limit_exceeded"),
        (HttpError(503), openai.InternalServerError, None),
        (ContextOverflow(limit=8192), openai.BadRequestError, "context_length_exceeded"),
    ],
)
@pytest.mark.parametrize("stream", [True, False])
def test_errors_map_to_sdk_exceptions(llm: MockLLM, client: openai.OpenAI, reply: Any,
                                      exc: type[Exception], code: str | None, stream: bool) -> None:
    llm.enqueue(reply)
    with pytest.raises(exc) as info:
        client.chat.completions.create(model="mock", messages=USER, stream=stream)
    assert isinstance(info.value, openai.APIStatusError)
    assert info.value.code == code
    if isinstance(reply, HttpError) and reply.status == 429:
        assert info.value.response.headers["retry-after"] == "0"
    if isinstance(reply, ContextOverflow):
        assert "maximum context length is 8192 tokens" in info.value.message


def test_dropped_stream_is_a_connection_error(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(DropStream("partial answer", chunks=2))
    stream = client.chat.completions.create(model="mock", messages=USER, stream=True)
    seen: list[str] = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in stream:
            seen.append(chunk.choices[0].delta.content or "")
    assert "".join(seen) == "partial answer"
    assert llm.wait_outcome(0) == "dropped"


def test_malformed_frame_fails_to_parse(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(MalformedStream("ok so far"))
    stream = client.chat.completions.create(model="mock", messages=USER, stream=True)
    with pytest.raises(json.JSONDecodeError):
        list(stream)


def test_a_stall_before_the_headers_times_the_client_out(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(Stall(seconds=30))
    with pytest.raises(openai.APITimeoutError):
        client.with_options(timeout=0.5, max_retries=0).chat.completions.create(
            model="mock", messages=USER, stream=True)
    assert llm.wait_outcome(0, timeout=10) == "client_closed"


def test_a_stall_mid_stream_times_the_client_out_after_the_text(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(Stall("the start", seconds=30))
    stream = client.with_options(timeout=0.5, max_retries=0).chat.completions.create(
        model="mock", messages=USER, stream=True)
    seen: list[str] = []
    with pytest.raises((openai.APITimeoutError, httpx.ReadTimeout)):
        for chunk in stream:
            seen.append(chunk.choices[0].delta.content or "")
    assert "".join(seen) == "the start"


def test_bad_utf8_in_a_frame_is_really_invalid_utf8(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(BadUtf8Stream("caf", after=" ok"))
    stream = client.chat.completions.create(model="mock", messages=USER, stream=True)
    with pytest.raises(UnicodeDecodeError):  # the SDK decodes frames strictly
        list(stream)


def test_in_stream_error_event_raises_api_error(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(StreamError("The model is overloaded", text="par"))
    stream = client.chat.completions.create(model="mock", messages=USER, stream=True)
    with pytest.raises(openai.APIError, match="overloaded"):
        list(stream)


def test_strict_mode_rejects_what_openai_rejects(llm: MockLLM, client: openai.OpenAI) -> None:
    orphan = [{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "call_9", "content": "r"}]
    with pytest.raises(openai.BadRequestError, match="must be a response to a preceeding message"):
        client.chat.completions.create(model="mock", messages=orphan)  # type: ignore[arg-type]
    unanswered = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "user", "content": "y"},
    ]
    with pytest.raises(openai.BadRequestError, match="did not have response messages: call_1"):
        client.chat.completions.create(model="mock", messages=unanswered)  # type: ignore[arg-type]
    llm.enqueue(Text("fine"))
    answered = [unanswered[0], {**unanswered[1], "content": ""}, {"role": "tool", "tool_call_id": "call_1", "content": "r"}]
    reply = client.chat.completions.create(model="mock", messages=answered)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "fine"


def test_strict_mode_rejects_what_llama_cpp_rejects(llm: MockLLM, client: openai.OpenAI) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    null_content = [{"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "r"}]
    # llama-cpp-python's request validation fails as a 500 whose message counts validation errors.
    with pytest.raises(openai.InternalServerError, match="validation error"):
        client.chat.completions.create(model="mock", messages=null_content)  # type: ignore[arg-type]
    twice = [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]
    with pytest.raises(openai.BadRequestError, match="roles must alternate"):
        client.chat.completions.create(model="mock", messages=twice)  # type: ignore[arg-type]
    assert llm.pending == 0 and [llm.wait_outcome(i) for i in range(2)] == ["error", "error"]
    # Tool results sit between turns: user, assistant(call), tool, assistant, user alternates.
    after_tool = [null_content[0], {**null_content[1], "content": ""}, null_content[2],
                  {"role": "assistant", "content": "done"}, {"role": "user", "content": "z"}]
    assert client.chat.completions.create(model="mock", messages=after_tool).choices[0].message.content == "z"  # type: ignore[arg-type]


def test_empty_stream_is_a_200_with_no_event(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(EmptyStream())
    with httpx.stream("POST", llm.url + "/chat/completions", json={"model": "mock", "messages": USER, "stream": True}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.read() == b""
    llm.enqueue(EmptyStream())  # without streaming the same server says what is wrong
    with pytest.raises(openai.BadRequestError, match="maximum context length") as caught:
        client.chat.completions.create(model="mock", messages=USER)
    assert caught.value.code == "context_length_exceeded"


def test_no_usage_mode_sends_no_usage(client: openai.OpenAI) -> None:
    with MockLLM(usage=False) as llm:
        client.base_url = httpx.URL(llm.url + "/")
        stream = client.chat.completions.create(model="mock", messages=USER, stream=True,
                                                stream_options={"include_usage": True})
        chunks = list(stream)
        assert chunks and all(c.usage is None for c in chunks)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "hi there"
        assert client.chat.completions.create(model="mock", messages=USER).usage is None


def test_max_tokens_cuts_the_answer_with_finish_reason_length(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(Text("one two three four five six seven eight nine ten", chunks=5))
    stream = client.chat.completions.create(model="mock", messages=USER, stream=True, max_tokens=2)
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two "
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"


# -- scripting and recording -------------------------------------------------------------------


def test_queue_then_default_then_repeat_last(client: openai.OpenAI) -> None:
    def ask() -> str:
        return client.chat.completions.create(model="mock", messages=USER).choices[0].message.content or ""

    with MockLLM(default=Text("fallback")) as llm:
        client.base_url = httpx.URL(llm.url + "/")
        llm.enqueue(Text("first"), Text("second"))
        assert [ask(), ask(), ask()] == ["first", "second", "fallback"]
    with MockLLM(repeat_last=True) as llm:
        client.base_url = httpx.URL(llm.url + "/")
        assert ask() == "hi there"  # echo until something is scripted
        llm.enqueue(Text("again"))
        assert [ask(), ask()] == ["again", "again"]


def test_records_bodies_and_headers(llm: MockLLM) -> None:
    with openai.OpenAI(base_url=llm.url, api_key="sk-test", max_retries=0,
                       default_headers={"X-Title": "tmg"}) as client:
        client.chat.completions.create(model="mock", messages=USER, max_tokens=5,
                                       tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}])
    (req,) = llm.requests
    assert req["messages"] == USER and req["max_tokens"] == 5
    assert req["tools"][0]["function"]["name"] == "f"
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.headers["x-title"] == "tmg"
    assert req.path == "/v1/chat/completions"
    assert llm.wait_outcome(0) == "ok"  # set just after the last byte goes out: wait for it


def test_sees_a_client_hang_up_mid_stream(llm: MockLLM, client: openai.OpenAI) -> None:
    llm.enqueue(Text("x" * 200, chunks=200, chunk_delay=0.1))  # 20 s if nobody hangs up
    stream = client.chat.completions.create(model="mock", messages=USER, stream=True)
    next(iter(stream))
    stream.close()
    assert llm.wait_outcome(0, timeout=10) == "client_closed"


def test_models_endpoint(llm: MockLLM, client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["mock"]


def test_runs_as_a_process_with_script_and_log(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({
        "replies": [{"kind": "Text", "text": "scripted", "chunks": 2},
                    {"kind": "ToolCall", "name": "read_file", "arguments": {"path": "a"}}],
        "default": {"kind": "Text", "text": "default"},
    }))
    port_file, log = tmp_path / "port", tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "e2e.mock_llm", "--port-file", str(port_file), "--script", str(script),
         "--log", str(log)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "mock process never wrote its port"
            time.sleep(0.02)
        url = f"http://127.0.0.1:{port_file.read_text().strip()}/v1"
        httpx.post(url.removesuffix("/v1") + "/_mock/enqueue", json=[{"kind": "Text", "text": "late"}])
        with openai.OpenAI(base_url=url, api_key="x", max_retries=0) as client:
            answers = [client.chat.completions.create(model="mock", messages=USER).choices[0].message
                       for _ in range(4)]
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    assert answers[0].content == "scripted"
    assert answers[1].tool_calls and answers[1].tool_calls[0].function.name == "read_file"
    assert [a.content for a in answers[2:]] == ["late", "default"]
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(logged) == 4 and logged[0]["body"]["messages"] == USER
    assert logged[0]["headers"]["authorization"] == "Bearer x"


# -- litellm, the other client the gateway uses --------------------------------------------------


async def test_litellm_streams_text_and_tool_call(llm: MockLLM) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    llm.enqueue(ToolCalls(ToolCall("read_file", {"path": "a.txt"}, id="call_7", chunks=3), text="Sure."))
    stream = await litellm.acompletion(
        model="openai/mock", api_base=llm.url, api_key="x", messages=USER, stream=True,
        stream_options={"include_usage": True}, num_retries=0,
    )
    chunks = [chunk async for chunk in stream]
    built = litellm.stream_chunk_builder(chunks, messages=USER)
    message = built.choices[0].message
    assert message.content == "Sure."
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("call_7", "read_file", {"path": "a.txt"})
    ]
    assert built.usage.prompt_tokens > 0
    assert llm.requests[0]["stream_options"] == {"include_usage": True}


def test_strict_mode_takes_image_parts_where_openai_does(llm: MockLLM, client: openai.OpenAI) -> None:
    from openai.types.chat import ChatCompletionContentPartTextParam, ChatCompletionToolMessageParam

    # OpenAI's own request types: a tool message is role, content and tool_call_id, its content
    # text parts only; image_url parts belong to user messages.
    assert set(ChatCompletionToolMessageParam.__annotations__) == {"role", "content", "tool_call_id"}
    assert "ChatCompletionContentPartTextParam" in str(ChatCompletionToolMessageParam.__annotations__["content"])
    assert ChatCompletionContentPartTextParam.__annotations__.keys() >= {"type", "text"}
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    turn = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "[image: image/png, 8 bytes]"}]
    llm.enqueue(Text("seen"))
    with_image = [*turn, {"role": "user", "content": [{"type": "text", "text": "The image:"}, image]}]
    assert client.chat.completions.create(model="mock", messages=with_image).choices[0].message.content == "seen"  # type: ignore[arg-type]
    in_tool = [*turn[:2], {"role": "tool", "tool_call_id": "call_1", "content": [image]}]
    with pytest.raises(openai.BadRequestError, match="Image URLs are only allowed for messages with role 'user'"):
        client.chat.completions.create(model="mock", messages=in_tool)  # type: ignore[arg-type]
    stray_key = [*turn[:2], {**turn[2], "images": [{"mime": "image/png", "data": "iVBORw0KGgo="}]}]
    with pytest.raises(openai.BadRequestError, match="'images' was unexpected"):
        client.chat.completions.create(model="mock", messages=stray_key)  # type: ignore[arg-type]
    not_an_image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:text/plain;base64,eA=="}}]}]
    with pytest.raises(openai.BadRequestError, match="Expected a base64-encoded data URL with an image MIME type"):
        client.chat.completions.create(model="mock", messages=not_an_image)  # type: ignore[arg-type]
