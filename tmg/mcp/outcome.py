"""What a tool call gives back, in tmg's terms (no mcp types leak past the connection)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tmg.media import Image


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


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the server lists it: name, JSON input schema, description, annotations."""

    name: str
    input_schema: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    annotations: dict[str, Any] | None = None


@dataclass(frozen=True)
class ToolOutcome:
    """A normalized tools/call result.

    `is_error` is the server's own `isError` flag: a call that returned is not a call that
    succeeded. `data` is the text parsed as JSON when it is JSON, else None. `images` are the
    image items (the text holds a note for each); `mismatch` says why the structured content did
    not match the tool's declared outputSchema (the text is used anyway).
    """

    is_error: bool
    text: str
    data: Any = None
    images: tuple[Image, ...] = ()
    mismatch: str | None = None

    @classmethod
    def from_text(cls, text: str, *, is_error: bool, images: tuple[Image, ...] = (),
                  mismatch: str | None = None) -> ToolOutcome:
        """Build an outcome, parsing the text as JSON when it is JSON."""
        return cls(is_error=is_error, text=text, data=parse_json_text(text), images=images, mismatch=mismatch)


def parse_json_text(text: str) -> Any:
    """The text as JSON, or None when it is not JSON (servers may answer prose)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None
