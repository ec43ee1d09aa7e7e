"""The HTTP side of the mock LLM: routes, JSON and SSE responses, hang-up detection."""

from __future__ import annotations

import json
import select
import socket
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from e2e.mock_llm import replies as r

if TYPE_CHECKING:
    from e2e.mock_llm import MockLLM

_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_MODELS_PATHS = ("/v1/models", "/models")


class RecordedRequest(dict):  # type: ignore[type-arg]
    """A chat request as the mock received it: the JSON body, plus where it came from.

    Attributes:
        path: the request path.
        headers: header names lower-cased.
        outcome: None while open, then ``ok``, ``error`` (an error status was sent),
            ``client_closed`` (the client hung up first) or ``dropped`` (the mock hung up).
    """

    def __init__(self, body: dict[str, Any], *, path: str, headers: dict[str, str]) -> None:
        super().__init__(body)
        self.path = path
        self.headers = headers
        self.outcome: str | None = None
        self.received_at = time.monotonic()
        self.finished_at: float | None = None


class _ClientGone(Exception):
    pass


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()  # compact, like OpenAI's frames


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked streaming
    disable_nagle_algorithm = True  # without it each request stalls ~40 ms on delayed ACK
    timeout = 60  # an idle keep-alive connection is dropped eventually
    server_version = "mock-llm/1"

    @property
    def mock(self) -> MockLLM:
        return self.server.mock  # type: ignore[attr-defined,no-any-return]

    def setup(self) -> None:
        super().setup()
        self.server.live_connections.add(self.connection)  # type: ignore[attr-defined]

    def finish(self) -> None:
        self.server.live_connections.discard(self.connection)  # type: ignore[attr-defined]
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # tests read llm.requests, not stderr

    # -- routes ---------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in _MODELS_PATHS:
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "mock"} for m in self.mock.model_ids]
            self._send_json(200, {"object": "list", "data": data})
        elif path == "/_mock/requests":
            self._send_json(200, [{"path": q.path, "outcome": q.outcome, "body": dict(q)} for q in self.mock.requests])
        else:
            self._send_json(404, r.error_body(f"Invalid URL (GET {path})", "invalid_request_error", None))

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path == "/_mock/enqueue":
            self.mock.enqueue(*[r.reply_from_json(item) for item in json.loads(raw or b"[]")])
            self._send_json(200, {"pending": self.mock.pending})
            return
        if path == "/_mock/reset":
            self.mock.reset()
            self._send_json(200, {"pending": 0})
            return
        if path not in _CHAT_PATHS:
            self._send_json(404, r.error_body(f"Invalid URL (POST {path})", "invalid_request_error", None))
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            self._send_json(400, r.error_body(
                "We could not parse the JSON body of your request. (HINT: This likely means you "
                "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
                "but what was sent was not valid JSON.)", "invalid_request_error", None))
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        req = RecordedRequest(body, path=path, headers=headers)
        self.mock.record(req)
        try:
            outcome = self._serve_chat(body)
        except (_ClientGone, BrokenPipeError, ConnectionResetError):
            outcome = "client_closed"
            self.close_connection = True
        self.mock.finish(req, outcome)

    # -- chat -------------------------------------------------------------------------------

    def _serve_chat(self, body: dict[str, Any]) -> str:
        model = str(body.get("model") or "")
        problem = r.check_messages(body) if self.mock.strict else None
        if problem:  # a real model never sees it, so no scripted reply is used up
            self._send_json(400, r.error_body(problem, "invalid_request_error", None, "messages"))
            return "error"
        strict_llama = r.check_llama(body) if self.mock.strict else None
        if strict_llama:
            status, message = strict_llama
            kind = "internal_server_error" if status >= 500 else "invalid_request_error"
            self._send_json(status, r.error_body(message, kind, None))
            return "error"
        reply = self.mock.next_reply()
        self._pause(reply.delay)
        stream = bool(body.get("stream"))
        if isinstance(reply, r.HttpError):
            extra = [("Retry-After", f"{reply.retry_after:g}")] if reply.retry_after is not None else []
            self._send_json(reply.status, r.http_error_body(reply, model), extra)
            return "error"
        if isinstance(reply, r.ContextOverflow):
            self._send_json(400, r.overflow_body(reply, body))
            return "error"
        if isinstance(reply, r.RawResponse):
            self._send_bytes(reply.status, reply.body.encode(), reply.content_type, list(reply.headers))
            return "ok" if reply.status < 400 else "error"
        if isinstance(reply, r.EmptyStream):
            if not stream:  # what the same server says without streaming
                self._send_json(400, r.overflow_body(r.ContextOverflow(limit=2048), body))
                return "error"
            self._start_stream()
            self.wfile.write(b"0\r\n\r\n")
            return "ok"
        env = r.Envelope(model)
        include_usage = self.mock.usage and bool((body.get("stream_options") or {}).get("include_usage"))
        if isinstance(reply, r.Stall):
            return self._serve_stall(reply, env, include_usage)
        if isinstance(reply, r.BadUtf8Stream):
            return self._serve_bad_utf8(reply, env, include_usage)
        if isinstance(reply, (r.MalformedStream, r.DropStream, r.StreamError)):
            return self._serve_failure(reply, env, stream, include_usage)
        answer = r.answer_for(reply, body)
        if not stream:
            whole = r.completion_body(answer, env)
            if not self.mock.usage:
                del whole["usage"]
            self._send_json(200, whole)
            return "ok"
        self._start_stream()
        for frame, is_content in r.stream_frames(answer, env, include_usage):
            self._send_event(frame)
            if is_content:
                self._pause(answer.chunk_delay)
        self._end_stream()
        return "ok"

    def _serve_failure(self, reply: r.MalformedStream | r.DropStream | r.StreamError,
                       env: r.Envelope, stream: bool, include_usage: bool) -> str:
        if not stream:
            if isinstance(reply, r.StreamError):
                self._send_json(500, r.error_body(reply.message, reply.type, reply.code))
                return "error"
            if isinstance(reply, r.MalformedStream):
                self._send_bytes(200, reply.garbage.encode(), "application/json")
                return "ok"
            data = _dumps(r.completion_body(r.answer_for(r.Text(reply.text), {}), env))
            self._send_head(200, "application/json", len(data))
            self.wfile.write(data[: len(data) // 2])
            return self._drop()
        self._start_stream()
        self._send_event(env.chunk({"role": "assistant", "content": ""}, include_usage=include_usage))
        for piece in r.split(reply.text, getattr(reply, "chunks", 1)):
            self._send_event(env.chunk({"content": piece}, include_usage=include_usage))
            self._pause(getattr(reply, "chunk_delay", 0.0))
        if isinstance(reply, r.DropStream):
            return self._drop()
        if isinstance(reply, r.MalformedStream):
            self._send_chunk(reply.garbage.encode() + b"\n\n")
            self._end_stream()
            return "ok"
        self._send_event(r.error_body(reply.message, reply.type, reply.code))
        self.wfile.write(b"0\r\n\r\n")  # OpenAI ends the stream after an error event, no [DONE]
        return "error"

    def _serve_stall(self, reply: r.Stall, env: r.Envelope, include_usage: bool) -> str:
        if reply.text:
            self._start_stream()
            self._send_event(env.chunk({"role": "assistant", "content": ""}, include_usage=include_usage))
            self._send_event(env.chunk({"content": reply.text}, include_usage=include_usage))
            self.wfile.flush()
        self._pause(reply.seconds)  # raises _ClientGone as soon as the client gives up
        return self._drop()

    def _serve_bad_utf8(self, reply: r.BadUtf8Stream, env: r.Envelope, include_usage: bool) -> str:
        self._start_stream()
        self._send_event(env.chunk({"role": "assistant", "content": ""}, include_usage=include_usage))
        marker = "\u0000BAD\u0000"
        frame = b"data: " + _dumps(env.chunk({"content": reply.text + marker + reply.after},
                                              include_usage=include_usage)) + b"\n\n"
        # json escapes the marker as \u0000BAD\u0000: swap it for the raw bytes
        self._send_chunk(frame.replace(b"\\u0000BAD\\u0000", reply.bad.encode("latin-1")))
        self._send_event(env.chunk({}, "stop", include_usage=include_usage))
        if include_usage:
            self._send_event(env.usage_chunk((1, 1)))
        self._end_stream()
        return "ok"

    # -- wire -------------------------------------------------------------------------------

    def _send_head(self, status: int, content_type: str, length: int | None,
                   extra: list[tuple[str, str]] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache")
        else:
            self.send_header("Content-Length", str(length))
        self.send_header("x-request-id", "req_" + uuid.uuid4().hex[:24])
        for key, value in extra or []:
            self.send_header(key, value)
        self.end_headers()

    def _send_bytes(self, status: int, data: bytes, content_type: str,
                    extra: list[tuple[str, str]] | None = None) -> None:
        self._send_head(status, content_type, len(data), extra)
        self.wfile.write(data)

    def _send_json(self, status: int, obj: Any, extra: list[tuple[str, str]] | None = None) -> None:
        self._send_bytes(status, _dumps(obj), "application/json", extra)

    def _start_stream(self) -> None:
        self._send_head(200, "text/event-stream; charset=utf-8", None)

    def _send_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _send_event(self, obj: Any) -> None:
        self._send_chunk(b"data: " + _dumps(obj) + b"\n\n")

    def _end_stream(self) -> None:
        self._send_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _drop(self) -> str:
        """Hang up mid-body: the client sees the connection end before the message does."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return "dropped"

    def _pause(self, seconds: float) -> None:
        """Sleep, but notice at once when the client hangs up (raises _ClientGone)."""
        if seconds <= 0:
            return
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], left)
            if not readable:
                continue
            try:
                peek = self.connection.recv(1, socket.MSG_PEEK)
            except OSError:
                raise _ClientGone from None
            if not peek:  # EOF: the client closed its end
                raise _ClientGone
            time.sleep(max(0.0, deadline - time.monotonic()))  # pipelined bytes, not a hang-up
            return
