"""What a tool call gives back, in tmg's terms (no mcp types leak past the connection)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tmg.media import Image


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
