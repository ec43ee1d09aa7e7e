"""Scripted replies of the mock LLM, and the OpenAI wire objects they turn into.

Replies are plain data; the handler decides how to send them. The shapes here (chunk, delta,
tool-call delta, usage, error body) copy OpenAI's chat completions API; the contract test
validates them with the ``openai`` SDK's pydantic types.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Union

from tmg.memory.framing import NOTES_HEADING


@dataclass(frozen=True)
class Text:
    """A text answer, streamed in ``chunks`` nearly equal pieces.

    ``delay`` waits before the response starts; ``chunk_delay`` between streamed pieces.
    ``usage`` overrides the (prompt, completion) token counts the mock reports.
    """

    text: str
    chunks: int = 1
    delay: float = 0.0
    chunk_delay: float = 0.0
    usage: tuple[int, int] | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Echo:
    """Answer with the text of the last user message (after ``prefix``), as a model answers the
    question: without the recalled notes or tmg notice that ride with it (``Notes remembered ...``,
    ``[tmg notice: ...]``)."""

    prefix: str = ""
    chunks: int = 1
    delay: float = 0.0
    chunk_delay: float = 0.0


@dataclass(frozen=True)
class ToolCall:
    """One tool call; ``arguments`` (a dict, or raw JSON text) streams in ``chunks`` fragments."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None  # None: a fresh ``call_...`` id per reply, as a real model gives
    chunks: int = 3
    delay: float = 0.0
    chunk_delay: float = 0.0
    usage: tuple[int, int] | None = None


@dataclass(frozen=True)
class ToolCalls:
    """Several tool calls in one answer (parallel calls), optionally after some text."""

    calls: tuple[ToolCall, ...]
    text: str = ""
    delay: float = 0.0
    chunk_delay: float = 0.0
    usage: tuple[int, int] | None = None

    def __init__(self, *calls: ToolCall, text: str = "", delay: float = 0.0,
                 chunk_delay: float = 0.0, usage: tuple[int, int] | None = None) -> None:
        if len(calls) == 1 and isinstance(calls[0], (list, tuple)):
            calls = tuple(calls[0])
        object.__setattr__(self, "calls", tuple(calls))
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "delay", delay)
        object.__setattr__(self, "chunk_delay", chunk_delay)
        object.__setattr__(self, "usage", usage)


@dataclass(frozen=True)
class HttpError:
    """An HTTP error with OpenAI's JSON error body; defaults follow the status (401, 429, ...)."""

    status: int
    message: str | None = None
    type: str | None = None
    code: str | None = None
    param: str | None = None
    retry_after: float | None = None  # sent as the Retry-After header when set
    delay: float = 0.0


@dataclass(frozen=True)
class ContextOverflow:
    """OpenAI's 400 ``context_length_exceeded`` for a prompt over ``limit`` tokens."""

    limit: int = 128000
    delay: float = 0.0


@dataclass(frozen=True)
class MalformedStream:
    """Stream ``text``, then a garbage SSE line, then end the stream normally.

    Without streaming the whole body is the garbage (not JSON).
    """

    text: str = ""
    garbage: str = 'data: {"choices": [{"delta": {"content": "cut'
    chunks: int = 1
    delay: float = 0.0


@dataclass(frozen=True)
class DropStream:
    """Stream ``text``, then drop the connection mid-body (no end chunk, no ``[DONE]``)."""

    text: str = "partial"
    chunks: int = 1
    delay: float = 0.0
    chunk_delay: float = 0.0


@dataclass(frozen=True)
class StreamError:
    """Stream ``text``, then an in-stream ``{"error": {...}}`` event, as OpenAI does on failure."""

    message: str = "The server had an error while processing your request. Sorry about that!"
    type: str = "server_error"
    code: str | None = None
    text: str = ""
    delay: float = 0.0


@dataclass(frozen=True)
class Stall:
    """Go silent for ``seconds`` (a hung server or proxy), then hang up.

    With no ``text`` it never sends the response headers; with ``text`` it streams that
    first (headers, role chunk, the text) and then goes silent mid-stream.
    """

    text: str = ""
    seconds: float = 600.0
    delay: float = 0.0


@dataclass(frozen=True)
class BadUtf8Stream:
    """Stream ``text`` with the raw bytes ``bad`` (given as latin-1 code points, invalid
    UTF-8 by default) inside a content delta, then end the stream normally."""

    text: str = "caf"
    bad: str = "\xff\xfe"
    after: str = " ok"
    delay: float = 0.0


@dataclass(frozen=True)
class EmptyStream:
    """A 200 event stream with no event at all (no chunk, no ``[DONE]``): what llama.cpp's
    server sends when a streamed prompt is longer than its context window."""

    delay: float = 0.0


@dataclass(frozen=True)
class RawResponse:
    """Any status and body, e.g. an HTML 502 page from a proxy."""

    status: int
    body: str = ""
    content_type: str = "text/html; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0


Reply = Union[
    Text, Echo, ToolCall, ToolCalls, HttpError, ContextOverflow, MalformedStream, DropStream,
    StreamError, RawResponse, Stall, BadUtf8Stream, EmptyStream,
]
REPLY_KINDS = (
    Text, Echo, ToolCall, ToolCalls, HttpError, ContextOverflow, MalformedStream, DropStream,
    StreamError, RawResponse, Stall, BadUtf8Stream, EmptyStream,
)


def reply_from_json(obj: dict[str, Any]) -> Reply:
    """Build a reply from ``{"kind": "Text", "text": "hi", ...}`` (the script file format)."""
    kinds = {cls.__name__: cls for cls in REPLY_KINDS}
    args = dict(obj)
    kind = args.pop("kind", None)
    if kind not in kinds:
        raise ValueError(f"unknown reply kind {kind!r}; expected one of {sorted(kinds)}")
    if "usage" in args and args["usage"] is not None:
        args["usage"] = tuple(args["usage"])
    if kind == "ToolCalls":
        calls = [ToolCall(**c) for c in args.pop("calls", [])]
        return ToolCalls(*calls, **args)
    if kind == "RawResponse" and "headers" in args:
        args["headers"] = tuple((k, v) for k, v in dict(args["headers"]).items())
    return kinds[kind](**args)


# -- answers: what a successful reply says ----------------------------------------------------


@dataclass
class Answer:
    """A successful reply, normalised: text, tool calls (with ids) and how to stream them."""

    text: str
    tool_calls: list[tuple[str, str, str]]  # (id, name, arguments JSON)
    text_chunks: int
    arg_chunks: int
    chunk_delay: float
    usage: tuple[int, int]
    finish_reason: str


def answer_for(reply: Reply, body: dict[str, Any]) -> Answer:
    """Normalise a text or tool-call reply for this request.

    A text longer than the request's ``max_tokens`` is cut there, ``finish_reason`` ``length``.
    """
    # As providers count: the tool definitions are part of the prompt.
    prompt = estimate_tokens(json.dumps(body.get("messages", [])))
    if body.get("tools"):
        prompt += estimate_tokens(json.dumps(body["tools"]))
    if isinstance(reply, Echo):
        reply = Text(reply.prefix + last_user_text(body), reply.chunks, 0.0, reply.chunk_delay)
    if isinstance(reply, Text):
        text, finish = reply.text, reply.finish_reason
        limit = body.get("max_tokens")
        if isinstance(limit, int) and limit > 0 and estimate_tokens(text) > limit:
            text, finish = text[: limit * 4], "length"
        usage = reply.usage or (prompt, estimate_tokens(text))
        return Answer(text, [], reply.chunks, 1, reply.chunk_delay, usage, finish)
    if isinstance(reply, ToolCall):
        reply = ToolCalls(reply, chunk_delay=reply.chunk_delay, usage=reply.usage)
    if isinstance(reply, ToolCalls):
        calls = [(c.id or _call_id(), c.name, _args_text(c.arguments)) for c in reply.calls]
        out = estimate_tokens(reply.text + "".join(n + a for _, n, a in calls))
        arg_chunks = max((c.chunks for c in reply.calls), default=1)
        return Answer(reply.text, calls, 1, arg_chunks, reply.chunk_delay,
                      reply.usage or (prompt, out), "tool_calls")
    raise TypeError(f"{type(reply).__name__} is not an answer")


def last_user_text(body: dict[str, Any]) -> str:
    """The last user message's own text: a memory block riding with it is left out."""
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, list):  # content parts
                text = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            else:
                text = str(content or "")
            # tmg's transient notices ride the same way (after the text, this request only).
            for rider in (f"\n\n{NOTES_HEADING}\n", "\n\n## PLUR MEMORY\n", "\n\n[tmg notice: "):
                text = text.split(rider, 1)[0]
            return text
    return ""


def estimate_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: about four characters a token."""
    return max(1, (len(text) + 3) // 4)


def split(text: str, parts: int) -> list[str]:
    """Cut ``text`` into ``parts`` nearly equal non-empty pieces (fewer if it is short)."""
    parts = max(1, min(parts, len(text)))
    if not text:
        return []
    size, extra = divmod(len(text), parts)
    out, pos = [], 0
    for i in range(parts):
        end = pos + size + (1 if i < extra else 0)
        out.append(text[pos:end])
        pos = end
    return out


def _call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]


def _args_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


# -- wire objects ---------------------------------------------------------------------------


class Envelope:
    """The fields every chunk of one completion shares (id, created, model)."""

    def __init__(self, model: str) -> None:
        self.id = "chatcmpl-" + uuid.uuid4().hex[:29]
        self.created = int(time.time())
        self.model = model

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None,
              include_usage: bool = False) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model, "system_fingerprint": "fp_mock",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        if include_usage:
            obj["usage"] = None  # OpenAI sends null on every chunk but the last
        return obj

    def usage_chunk(self, usage: tuple[int, int]) -> dict[str, Any]:
        return {
            "id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model, "system_fingerprint": "fp_mock", "choices": [],
            "usage": usage_object(usage),
        }


def stream_frames(answer: Answer, env: Envelope, include_usage: bool) -> Iterator[tuple[dict[str, Any], bool]]:
    """Yield ``(chunk, is_content)`` in OpenAI's order; pause after content chunks only."""
    u = include_usage
    first: dict[str, Any] = {"role": "assistant", "content": "", "refusal": None}
    if not answer.text and answer.tool_calls:
        first["content"] = None
    yield env.chunk(first, include_usage=u), False
    for piece in split(answer.text, answer.text_chunks):
        yield env.chunk({"content": piece}, include_usage=u), True
    for index, (call_id, name, args) in enumerate(answer.tool_calls):
        pieces = split(args, answer.arg_chunks) or [""]
        head = {"index": index, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": ""}}
        yield env.chunk({"tool_calls": [head]}, include_usage=u), True
        for piece in pieces:
            frag = {"index": index, "function": {"arguments": piece}}
            yield env.chunk({"tool_calls": [frag]}, include_usage=u), True
    yield env.chunk({}, answer.finish_reason, include_usage=u), False
    if include_usage:
        yield env.usage_chunk(answer.usage), False


def completion_body(answer: Answer, env: Envelope) -> dict[str, Any]:
    """A non-streamed ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None, "refusal": None,
                               "annotations": []}
    if answer.tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in answer.tool_calls
        ]
    return {
        "id": env.id, "object": "chat.completion", "created": env.created, "model": env.model,
        "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": answer.finish_reason}],
        "usage": usage_object(answer.usage),
    }


def usage_object(usage: tuple[int, int]) -> dict[str, Any]:
    prompt, completion = usage
    return {
        "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0,
                                      "rejected_prediction_tokens": 0},
    }


# -- errors -------------------------------------------------------------------------------------

_DEFAULT_ERRORS: dict[int, tuple[str, str | None, str]] = {  # status: (type, code, message)
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key",
          "Incorrect API key provided: sk-mock***********. You can find your API key at "
          "https://platform.openai.com/account/api-keys."),
    403: ("request_forbidden", "unsupported_country_region_territory",
          "Country, region, or territory not supported"),
    404: ("invalid_request_error", "model_not_found",
          "The model `{model}` does not exist or you do not have access to it."),
    429: ("requests", "rate_limit_exceeded",
          "Rate limit reached for {model} in organization org-mock on requests per min (RPM): "
          "Limit 3, Used 3, Requested 1.{retry} Visit https://platform.openai.com/account/rate-limits "
          "to learn more."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}


def error_body(message: str, type_: str | None, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def http_error_body(err: HttpError, model: str) -> dict[str, Any]:
    type_, code, template = _DEFAULT_ERRORS.get(err.status, ("invalid_request_error", None, "mock error"))
    retry = f" Please try again in {err.retry_after:g}s." if err.retry_after is not None else ""
    message = err.message or template.format(model=model, retry=retry)
    return error_body(message, err.type or type_, err.code or code, err.param)


def overflow_body(reply: ContextOverflow, body: dict[str, Any]) -> dict[str, Any]:
    used = max(reply.limit + 1, estimate_tokens(json.dumps(body.get("messages", []))))
    message = (
        f"This model's maximum context length is {reply.limit} tokens. However, your messages "
        f"resulted in {used} tokens. Please reduce the length of the messages."
    )
    return error_body(message, "invalid_request_error", "context_length_exceeded", "messages")


def check_llama(body: dict[str, Any]) -> tuple[int, str] | None:
    """What llama.cpp-style servers reject although OpenAI accepts it: (status, message) or None.

    ``content: null`` on an assistant message fails llama-cpp-python's request validation (a 500
    whose message counts validation errors); roles that do not alternate fail the chat templates
    that require it (SmolLM2's, Mistral's, Gemma's).
    """
    previous = None
    for i, msg in enumerate(body.get("messages") or []):
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        if role == "assistant" and msg.get("content", "") is None:
            return 500, ("1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', "
                         f"{i}, 'ChatCompletionRequestAssistantMessage', 'content'), 'msg': "
                         "'Input should be a valid string', 'input': None}")
        if role in ("user", "assistant") and role == previous:
            return 400, ("Conversation roles must alternate user/assistant/user/assistant/... "
                         f"(messages[{i}] is a second '{role}' message in a row)")
        if role in ("user", "assistant", "tool"):
            previous = role  # tool results sit between the call and the next assistant or user message
    return None


def check_messages(body: dict[str, Any]) -> str | None:
    """What OpenAI would reject in this request body (its own wording), or None."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "[] is too short - 'messages'"
    open_calls: list[str] = []
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function', and 'developer'."
        problem = _check_content(i, role, msg)
        if problem:
            return problem
        if role == "tool":
            if msg.get("tool_call_id") not in open_calls:
                return (f"Invalid parameter: messages with role 'tool' must be a response to a "
                        f"preceeding message with 'tool_calls'. (messages[{i}])")
            open_calls.remove(msg["tool_call_id"])
            continue
        if open_calls:
            return ("An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                    f"response messages: {', '.join(open_calls)}")
        if role == "assistant":
            open_calls = [c.get("id") for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
    if open_calls:
        return ("An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_calls)}")
    return None


# OpenAI's chat content parts (API reference, "messages"): a user message takes text, image_url,
# input_audio and file parts; the other roles take text parts (the assistant also refusal); a
# tool message's keys are role, content and tool_call_id, nothing else.
_PART_TYPES = "'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'"
_TOOL_KEYS = ("role", "content", "tool_call_id")
_DATA_URL = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}")


def _check_content(i: int, role: str, msg: dict[str, Any]) -> str | None:
    """What OpenAI would say about message ``i``'s content parts (and a tool message's keys), or None."""
    if role == "tool":
        extra = sorted(k for k in msg if k not in _TOOL_KEYS)
        if extra:
            return f"Additional properties are not allowed ('{extra[0]}' was unexpected) - 'messages.{i}'"
    content = msg.get("content")
    if not isinstance(content, list):
        return None
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        where = f"messages[{i}].content[{j}]"
        if kind not in ("text", "image_url", "input_audio", "refusal", "audio", "file"):
            return f"Invalid value: '{kind}'. Supported values are: {_PART_TYPES}. - '{where}.type'"
        if kind == "text" and not isinstance(part.get("text"), str):
            return f"Missing required parameter: '{where}.text'."
        if kind == "image_url":
            if role != "user":
                return (f"Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role 'user', "
                        f"but this message with role '{role}' contains an image URL.")
            url = (part.get("image_url") or {}).get("url") if isinstance(part.get("image_url"), dict) else None
            if not isinstance(url, str):
                return f"Missing required parameter: '{where}.image_url.url'."
            if url.startswith("data:") and not _DATA_URL.fullmatch(url):
                return (f"Invalid '{where}.image_url.url'. Expected a base64-encoded data URL with an image "
                        "MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got a value "
                        "that is not one.")
            if not url.startswith(("data:", "http://", "https://")):
                return f"Invalid '{where}.image_url.url'. Expected a valid URL, but got a value with an invalid format."
        elif kind != "text" and role != "user" and not (kind == "refusal" and role == "assistant"):
            return f"Invalid value: '{kind}'. Supported values are: 'text'. - '{where}.type'"
    return None
