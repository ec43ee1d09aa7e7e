"""What a file's bytes are: text to show, or binary to summarise (type, size), never dumped."""

from __future__ import annotations

import mimetypes
from pathlib import Path

SNIFF_BYTES = 8192  # a NUL in the first 8 KiB means binary (git's and ripgrep's test)

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
    (b"%PDF-", "PDF document"), (b"PK\x03\x04", "ZIP archive"), (b"\x1f\x8b", "gzip archive"),
    (b"\x7fELF", "ELF executable"), (b"SQLite format 3\x00", "SQLite database"),
    (b"RIFF", "RIFF media"), (b"\x00asm", "WebAssembly module"), (b"BZh", "bzip2 archive"),
    (b"\xfd7zXZ\x00", "xz archive"), (b"7z\xbc\xaf\x27\x1c", "7z archive"),
)


def binary_kind(path: Path, head: bytes) -> str | None:
    """The kind of a binary file from its first bytes ("PNG image", "binary data"), or None for text."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if b"\x00" not in head[:SNIFF_BYTES]:
        return None
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "binary data"


def summary(path: Path, kind: str, size: int) -> str:
    return f"{path.name}: binary file ({kind}, {size:,} bytes); not shown as text"
