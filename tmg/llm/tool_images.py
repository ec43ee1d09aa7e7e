"""Images from tool results, as the provider request carries them.

OpenAI's chat format takes only text in a `tool` message, so the images a tool returned travel
in a `user` message right after the tool results of that turn, as `image_url` parts with data
URLs (what OpenAI, vLLM, llama.cpp's server and litellm accept for vision models; litellm turns
them into Anthropic's and Gemini's image blocks).

Storage (decided here, see docs/mcp-capabilities.md): a tool message in the history keeps its
images inline under `images` ([{mime, data}]), each bounded by tmg.media (a larger image
is only named in the text). Inline keeps a session whole on its own (resume, failover to another
provider, `tmg -t`) with no side files to lose; the bound keeps megabytes out of the history.
Only the tool results of the latest prompt carry their images to the model: an older image stays
a note in the text ("[image: image/png, 9.8 KB]"), so a long session does not re-send every
picture on every turn. A provider that does not take images gets the notes alone. The images of
the MCP resources a prompt names (tmg.mcp.resource_refs) are stored the same way on the
user message and sent as image parts of it, with the latest prompt only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tmg.llm.gateway import ProviderSpec

Message = dict[str, Any]

IMAGES_KEY = "images"  # the storage field of a tool message (or a prompt's); never sent as such
PROMPT_KEY = "@prompt"  # prompt_images' key for the images of the prompt itself (MCP resources it named)
_INTRO = "The image{s} returned by the tool call{s} above:"


def takes_images(provider: ProviderSpec) -> bool:
    """PROVIDERS.x.IMAGES when set, else what litellm's model map says about the model."""
    if provider.images is not None:
        return provider.images
    from tmg.llm.pricing import supports_vision

    return supports_vision(provider.model)


def prompt_images(stored: Sequence[Message]) -> dict[str, list[dict[str, Any]]]:
    """The stored images of the latest prompt's tool results, by tool_call_id: a scan back from
    the end to the latest user prompt, so its cost does not grow with the session."""
    found: dict[str, list[dict[str, Any]]] = {}
    for message in reversed(stored):
        role = message.get("role")
        if role in ("user", "tool") and isinstance(message.get(IMAGES_KEY), list):
            kept = [i for i in message[IMAGES_KEY] if isinstance(i, dict) and i.get("data")]
            if kept:
                found[PROMPT_KEY if role == "user" else str(message.get("tool_call_id"))] = kept
        if role == "user":
            break
    return found


def with_tool_images(messages: list[Message], provider: ProviderSpec,
                     images: dict[str, list[dict[str, Any]]]) -> list[Message]:
    """`messages` (the provider view, which never holds stored images) as `provider` gets them:
    when it takes images, `images` (prompt_images) in a user message after each run of the
    latest prompt's tool results.

    Returns `messages` itself when there are no images or the provider takes none (never a look
    into litellm's model map then); else only the latest prompt's messages are looked at.
    """
    if not images or not takes_images(provider):
        return messages
    start = len(messages)
    while start and messages[start - 1].get("role") != "user":
        start -= 1
    out = messages[:start]
    if start and PROMPT_KEY in images:  # the prompt's own images: parts of the prompt's message
        out[-1] = _with_parts(out[-1], images[PROMPT_KEY])
    pending: list[dict[str, Any]] = []
    for message in messages[start:]:
        if pending and message.get("role") != "tool":
            out.append(_image_message(pending))
            pending = []
        out.append(message)
        if message.get("role") == "tool":
            pending.extend(images.get(str(message.get("tool_call_id")), ()))
    if pending:
        out.append(_image_message(pending))
    return out


def _image_message(images: list[dict[str, Any]]) -> Message:
    s = "s" if len(images) > 1 else ""
    parts: list[dict[str, Any]] = [{"type": "text", "text": _INTRO.format(s=s)}]
    parts.extend(_image_part(i) for i in images)
    return {"role": "user", "content": parts}


def _with_parts(message: Message, images: list[dict[str, Any]]) -> Message:
    content = message.get("content")
    parts = list(content) if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
    parts.extend(_image_part(i) for i in images)
    return {**message, "content": parts}


def _image_part(image: dict[str, Any]) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{image.get('mime') or 'image/png'};base64,{image['data']}"}}
