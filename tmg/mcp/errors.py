"""MCP failures in tmg's terms: the exceptions the client raises, and what an exception from the
SDK means (its MCPError, anyio's errors, the ExceptionGroups it wraps them in): an error answer,
a timeout, a lost HTTP session, or a broken connection. Each reads as one line.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator


class McpStartError(RuntimeError):
    """The server could not be started, initialized or listed."""


class McpStartTimeout(McpStartError):
    """The server did not answer initialize or tools/list within its start timeout."""


class SamplingDeclined(RuntimeError):
    """A server's sampling request is not answered; the message says why (sent to the server)."""


class McpCallError(RuntimeError):
    """A call raised: timeout, transport failure, or a protocol error (not an `isError` result)."""


class McpCallFailed(McpCallError):
    """The server answered the call with a JSON-RPC error (or a result that does not parse): the
    call failed, the connection stands, so the server's other tools stay callable."""

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message  # what the server said, for the model


class McpCallTimeout(McpCallError):
    """The call did not answer in time. The SDK cancels it and the session stays usable, so
    this is not a broken server, only a slow call. `at_limit`: it ran to the most a call may
    take (progress kept it alive until then), rather than going silent."""

    def __init__(self, message: str, *, at_limit: bool = False) -> None:
        super().__init__(message)
        self.at_limit = at_limit


class McpSessionLost(McpCallError):
    """The HTTP server no longer knows the session (it answered 404, e.g. after a restart): the
    call never ran, so it may be sent again once the client has initialized a new session."""


_REQUEST_TIMEOUT = -32001  # the SDK's MCPError code for a read timeout (it cancels the request)
_CONNECTION_CLOSED = -32000  # the SDK's MCPError code when the connection went away
_INVALID_REQUEST = -32600


def request_failure(exc: BaseException, label: str, *, connected: bool = True,
                    bound: float | None = None) -> McpCallError:
    """The error one request's failure is, its text `label: reason` (just the reason without a
    label): a timeout (the SDK cancelled the request: a slow call, not a broken server), a lost
    HTTP session (the request never ran), an error answer (the connection stands), else a broken
    connection. `connected`: the connection is still up (a timeout or an answer needs one);
    `bound`: the request's bound in seconds, said for a timeout."""
    reason = f"no answer within {bound:g} s" if bound is not None and is_timeout(exc) else describe_error(exc)
    text = f"{label}: {reason}" if label else reason
    if is_timeout(exc) and connected:
        return McpCallTimeout(text)
    if is_session_lost(exc):
        return McpSessionLost(text)
    if connected and is_error_answer(exc):
        return McpCallFailed(text, reason=answer_reason(exc))
    return McpCallError(text)


@contextlib.contextmanager
def request_failures(label: str, *, connected: Callable[[], bool] = lambda: True,
                     bound: float | None = None) -> Iterator[None]:
    """Whatever the request inside raises leaves as the McpCallError it is (`request_failure`);
    a cancellation, and an McpCallError already said, pass through unchanged."""
    try:
        yield
    except (asyncio.CancelledError, McpCallError):
        raise
    except BaseException as exc:  # the SDK raises MCPError, anyio errors, ExceptionGroups
        raise request_failure(exc, label, connected=connected(), bound=bound) from exc


def leaf(exc: BaseException) -> BaseException:
    """The first exception inside the ExceptionGroups anyio wraps failures in (or `exc` itself)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def answer_reason(exc: BaseException) -> str:
    """What the server's error answer said, for the model: 'Unknown tool: x (JSON-RPC error -32602)'."""
    exc = leaf(exc)
    code = getattr(exc, "code", None)
    if isinstance(code, int) and getattr(exc, "error", None) is not None:
        message = str(getattr(exc, "message", "") or "")
        message = message.removeprefix(f"MCP error {code}: ")  # TypeScript servers say the code twice
        return f"{message or 'no message'} (JSON-RPC error {code})"
    return f"the result does not parse ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"


def is_error_answer(exc: BaseException) -> bool:
    """True when the server answered (a JSON-RPC error, or a result that does not parse): the
    connection is fine. A closed connection or a transport error is not an answer."""
    exc = leaf(exc)
    code = getattr(exc, "code", None)
    if isinstance(code, int) and getattr(exc, "error", None) is not None:  # MCPError
        return code not in (_CONNECTION_CLOSED, _REQUEST_TIMEOUT)
    from pydantic import ValidationError  # the SDK's own dependency, already imported with it

    return isinstance(exc, ValidationError)


def is_timeout(exc: BaseException) -> bool:
    exc = leaf(exc)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return True
    code = getattr(exc, "code", None)
    if code is None:
        code = getattr(getattr(exc, "error", None), "code", None)
    return code == _REQUEST_TIMEOUT


def is_session_lost(exc: BaseException) -> bool:
    """An HTTP 404 to a request of a known session, as the SDK spells it ("Session terminated") or
    as the server's own error body says it ("Session not found")."""
    exc = leaf(exc)
    error = getattr(exc, "error", None)
    return getattr(error, "code", None) == _INVALID_REQUEST and \
        getattr(error, "message", "") in ("Session terminated", "Session not found")


def describe_error(exc: BaseException) -> str:
    """A one-line reason, unwrapping the ExceptionGroups anyio wraps start-up failures in."""
    exc = leaf(exc)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "timed out"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
