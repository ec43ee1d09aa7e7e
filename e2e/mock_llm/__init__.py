"""A local mock of an OpenAI-compatible chat API: a real HTTP server for tests and benchmarks.

The wire format follows OpenAI's (checked against the ``openai`` SDK's own types by
``e2e/test_mock_llm_contract.py``): JSON or SSE chat completions, streamed tool-call deltas,
the final usage chunk, OpenAI's error bodies and ``Retry-After``.

In a test::

    with MockLLM() as llm:                        # llm.url == "http://127.0.0.1:PORT/v1"
        llm.enqueue(Text("hello", chunks=5), ToolCall("read_file", {"path": "a.txt"}),
                    HttpError(429, retry_after=0), ContextOverflow(), DropStream("par"),
                    EmptyStream())
        ...                                       # point the client at llm.url
        assert llm.requests[0]["messages"][-1]["content"] == "hi"
        assert llm.requests[0].headers["authorization"] == "Bearer x"

Replies are served first in, first out; when the queue is empty the ``default`` reply answers
(``Echo()`` unless configured), or with ``repeat_last=True`` the last scripted reply again (an
endless tool loop). ``llm.requests`` records every chat request (its JSON body, plus
``.path``, ``.headers`` and ``.outcome``: ``ok``, ``error``, ``client_closed`` or ``dropped``);
``llm.wait_outcome(i)`` waits for a request to finish, e.g. to see a cancelled client hang up.

As a separate process (tmux tests, benchmarks)::

    python -m e2e.mock_llm --port-file PORT_FILE [--script SCRIPT.json] [--log REQUESTS.jsonl]
                           [--port 0] [--default-text TEXT] [--repeat-last]

``PORT_FILE`` receives the port once the server listens (written atomically: poll for it).
``SCRIPT.json`` is a list of replies, or ``{"replies": [...], "default": {...},
"repeat_last": false}``, each reply an object naming its class: ``{"kind": "Text", "text":
"hi", "chunks": 3}``, ``{"kind": "ToolCall", "name": "read_file", "arguments": {"path":
"a"}}``, ``{"kind": "HttpError", "status": 429, "retry_after": 0}``. Every request is appended
to ``REQUESTS.jsonl`` as it arrives. While running, ``POST /_mock/enqueue`` (a JSON list of
replies) adds replies, ``POST /_mock/reset`` forgets queue and recorded requests, ``GET /_mock/requests`` lists
the recorded requests. SIGTERM or Ctrl-C stops it.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections import deque
from http.server import ThreadingHTTPServer
from typing import Any, Callable

from e2e.mock_llm.handler import RecordedRequest, _Handler
from e2e.mock_llm.replies import (
    REPLY_KINDS,
    ContextOverflow,
    DropStream,
    Echo,
    EmptyStream,
    HttpError,
    MalformedStream,
    BadUtf8Stream,
    RawResponse,
    Reply,
    Stall,
    StreamError,
    Text,
    ToolCall,
    ToolCalls,
    reply_from_json,
)

__all__ = [
    "MockLLM",
    "RecordedRequest",
    "Reply",
    "Text",
    "Echo",
    "ToolCall",
    "ToolCalls",
    "HttpError",
    "ContextOverflow",
    "MalformedStream",
    "DropStream",
    "EmptyStream",
    "StreamError",
    "RawResponse",
    "Stall",
    "BadUtf8Stream",
    "REPLY_KINDS",
    "reply_from_json",
]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # benchmarks open many connections at once

    def __init__(self, address: tuple[str, int], mock: MockLLM) -> None:
        self.mock = mock
        self.live_connections: set[Any] = set()
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # clients hang up on idle keep-alive connections: normal, not a mock bug
        super().handle_error(request, client_address)


class MockLLM:
    """A scriptable OpenAI-compatible server on 127.0.0.1, run in a background thread.

    Args:
        default: the reply when the queue is empty (``Echo()``: the last user message).
        repeat_last: when the queue is empty, serve the last scripted reply again.
        strict: reject message lists OpenAI would reject (a tool message without its call,
            a tool call left unanswered) with OpenAI's 400, and what llama.cpp-style servers
            reject (``content: null`` on an assistant message: a 500 validation error; roles
            that do not alternate: a 400), so bugs show up in tests.
        usage: False: never send usage (no usage chunk, no ``usage`` field), like llama.cpp.
        log_path: append every request to this JSONL file as it arrives.
        port: 0 picks a free port.
    """

    def __init__(
        self,
        *,
        default: Reply | None = None,
        repeat_last: bool = False,
        strict: bool = True,
        log_path: str | None = None,
        port: int = 0,
        model_ids: tuple[str, ...] = ("mock",),
        usage: bool = True,
    ) -> None:
        self.default: Reply = default if default is not None else Echo()
        self.repeat_last = repeat_last
        self.strict = strict
        self.usage = usage
        self.model_ids = model_ids
        self._log_path = log_path
        self._port = port
        self._queue: deque[Reply] = deque()
        self._last: Reply | None = None
        self._requests: list[RecordedRequest] = []
        self._cond = threading.Condition()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> MockLLM:
        """Bind and serve in a daemon thread; returns self."""
        self._server = _Server(("127.0.0.1", self._port), self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
            name="mock-llm",
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and hang up on every open connection (idle keep-alives included)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        for conn in list(server.live_connections):
            _hang_up(conn)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> MockLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("MockLLM is not running")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The API base, ending in ``/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script -----------------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        """Add replies to the end of the queue."""
        for reply in replies:
            if not isinstance(reply, REPLY_KINDS):
                raise TypeError(f"not a mock reply: {reply!r}")
        with self._cond:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not yet served."""
        with self._cond:
            return len(self._queue)

    def reset(self) -> None:
        """Forget queued replies and recorded requests."""
        with self._cond:
            self._queue.clear()
            self._requests.clear()
            self._last = None

    def next_reply(self) -> Reply:
        with self._cond:
            if self._queue:
                self._last = self._queue.popleft()
                return self._last
            if self.repeat_last and self._last is not None:
                return self._last
            return self.default

    # -- recording -------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the chat requests received so far, oldest first."""
        with self._cond:
            return list(self._requests)

    def record(self, req: RecordedRequest) -> None:
        with self._cond:
            self._requests.append(req)
            self._cond.notify_all()
        if self._log_path:
            line = json.dumps(
                {"ts": req.received_at, "path": req.path, "headers": req.headers, "body": dict(req)}
            )
            with self._cond, open(self._log_path, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    def finish(self, req: RecordedRequest, outcome: str) -> None:
        with self._cond:
            if req.outcome is None:
                req.outcome = outcome
                req.finished_at = time.monotonic()
            self._cond.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Wait until ``predicate()`` holds (checked whenever a request starts or ends)."""
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def wait_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait until ``count`` chat requests have arrived; raises TimeoutError otherwise."""
        if not self.wait_for(lambda: len(self._requests) >= count, timeout):
            raise TimeoutError(f"mock LLM saw {len(self._requests)} requests, wanted {count}")
        return self.requests

    def wait_outcome(self, index: int = -1, timeout: float = 10.0) -> str:
        """Wait until request ``index`` has finished and return its outcome."""
        self.wait_requests(1 if index < 0 else index + 1, timeout)
        req = self.requests[index]
        if not self.wait_for(lambda: req.outcome is not None, timeout):
            raise TimeoutError(f"request {index} still open after {timeout}s")
        assert req.outcome is not None
        return req.outcome


def _hang_up(conn: Any) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
