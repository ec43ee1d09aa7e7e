"""What a tool result holds besides text: images, and the short words that stand for the rest.

A tool result reaches the model as text plus, when the provider takes them, image parts. Every
non-text thing also leaves a short bracketed note in the text ("[image: image/png, 9.8 KB]"), so
a model that cannot see images, a transcript and the tool line all say what was there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Bounds that keep the history (where images are stored inline, see tmg/llm/tool_images.py) and
# the request small: a screenshot-sized image passes, a megabyte scan is named, not stored.
MAX_IMAGE_B64_CHARS = 700_000  # ~512 KB of image
MAX_IMAGES_PER_RESULT = 4
MAX_RESOURCE_TEXT_CHARS = 8_000  # embedded resource text kept in the result
# A run of base64 this long is data, never prose: it is named, not dumped on the model.
_BASE64_RUN = re.compile(r"(?:data:[\w.+-]+/[\w.+-]+;base64,)?[A-Za-z0-9+/]{2000,}={0,2}")


@dataclass(frozen=True)
class Image:
    """An image a tool returned: its MIME type and base64 data (no data: prefix)."""

    mime: str
    data: str

    @property
    def url(self) -> str:
        """A data URL, as OpenAI's `image_url` parts take it."""
        return f"data:{self.mime};base64,{self.data}"


def size_text(b64_chars: int) -> str:
    """The decoded size of `b64_chars` characters of base64, for a person: '9.8 KB'."""
    size = b64_chars * 3 // 4
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def placeholder(kind: str, mime: str, b64_chars: int, note: str = "") -> str:
    """The note that stands for a non-text item: '[image: image/png, 9.8 KB]'."""
    extra = f", {note}" if note else ""
    return f"[{kind}: {mime or 'unknown type'}, {size_text(b64_chars)}{extra}]"


def scrub_base64(text: str) -> str:
    """`text` with long base64 runs (images inside structured content, blobs) named, not dumped."""
    return _BASE64_RUN.sub(lambda m: f"[base64 data, {size_text(len(m.group(0)))}, omitted]", text)


def summary(text: str, images: tuple[Image, ...]) -> str:
    """What a result was, for the tool line: the text's size, or the images when there is no text."""
    if images:
        kinds = ", ".join(f"{i.mime} {size_text(len(i.data))}" for i in images)
        return f"{len(images)} image{'s' if len(images) > 1 else ''} ({kinds})"
    return f"{len(text)} characters"
