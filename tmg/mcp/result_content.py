"""A tools/call result, in its wire form (the JSON the server sent), as tmg's ToolOutcome.

One reading for both ways a result arrives: through the mcp SDK (McpConnection dumps its
CallToolResult to this form) and through the memory broker's small client (which never
imports the SDK). Every content item becomes text, or an image plus a note saying what it is.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tmg import media
from tmg.mcp.outcome import ToolOutcome


def tool_outcome(result: dict[str, Any], mismatch: str | None = None) -> ToolOutcome:
    """Structured content is the text only when there is no text item (servers mirror it as text).
    Long base64 runs are named in any text, so an image inside structured content is never
    dumped on the model."""
    content = [block for block in result.get("content") or [] if isinstance(block, dict)]
    pieces: list[str] = []
    images: list[media.Image] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            pieces.append(str(block.get("text", "")))
        elif kind == "image":
            pieces.append(image_note(str(block.get("mimeType", "")), str(block.get("data", "")), images))
        elif kind == "audio":
            data = str(block.get("data", ""))
            pieces.append(media.placeholder("audio", str(block.get("mimeType", "")), len(data), "not playable here"))
        elif kind == "resource":
            pieces.append(resource_text(block.get("resource") or {}, images))
        elif kind == "resource_link":
            pieces.append(_link_text(block))
        else:
            pieces.append(f"[{kind or 'unknown'} content, not shown]")
    structured = result.get("structuredContent")
    if structured is not None and not any(block.get("type") == "text" for block in content):
        pieces.append(json.dumps(structured))
    text = media.scrub_base64("\n".join(pieces))
    return ToolOutcome.from_text(text, is_error=bool(result.get("isError")), images=tuple(images), mismatch=mismatch)


def image_note(mime: str, data: str, images: list[media.Image]) -> str:
    """Keep the image when it is within bounds; the note says what it is either way."""
    if len(data) > media.MAX_IMAGE_B64_CHARS:
        return media.placeholder("image", mime, len(data), "too large to pass on")
    if len(images) >= media.MAX_IMAGES_PER_RESULT:
        return media.placeholder("image", mime, len(data), "one image too many to pass on")
    images.append(media.Image(mime, data))
    return media.placeholder("image", mime, len(data))


def resource_text(resource: dict[str, Any], images: list[media.Image]) -> str:
    """An embedded resource: its text (bounded), an image blob as an image, other blobs named."""
    uri, mime = str(resource.get("uri", "")), str(resource.get("mimeType") or "")
    text = resource.get("text")
    if text is not None:
        text = str(text)
        if len(text) > media.MAX_RESOURCE_TEXT_CHARS:
            cut = len(text) - media.MAX_RESOURCE_TEXT_CHARS
            text = text[: media.MAX_RESOURCE_TEXT_CHARS] + f"\n[truncated: {cut} more characters]"
        return f"[resource {uri}{f' ({mime})' if mime else ''}]\n{text}"
    blob = str(resource.get("blob") or "")
    if mime.startswith("image/"):
        return f"[resource {uri}] " + image_note(mime, blob, images)
    return f"[resource {uri}] " + media.placeholder("binary", mime, len(blob), "not shown")


def _link_text(link: dict[str, Any]) -> str:
    """A resource link: URI and name (the model can name it back; resources/read is not offered)."""
    details = [str(d) for d in (link.get("mimeType"), link.get("description")) if d]
    name = link.get("title") or link.get("name") or ""
    return f"[resource link: {name} <{link.get('uri', '')}>{' (' + '; '.join(details) + ')' if details else ''}]"


async def output_mismatch(session: Any, name: str, result: Any) -> str | None:
    """Why the result's structured content misses the tool's declared outputSchema, or None.

    One short reason (the validator's message), never the schema: the result is used anyway.
    """
    try:
        await session.validate_tool_result(name, result)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - RuntimeError from the SDK, or a listing that failed
        reason = getattr(exc.__cause__, "message", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        return media.scrub_base64(str(reason))[:200]
    return None


def sdk_outcome(result: Any, mismatch: str | None = None) -> ToolOutcome:
    """The SDK's CallToolResult as a ToolOutcome, read in its wire form (one reading for the SDK's
    results and the broker's)."""
    return tool_outcome(result.model_dump(mode="json", by_alias=True, exclude_none=True), mismatch)
