"""The chat command's options, as one value (kept import-light: the ``-t`` path uses it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChatOptions:
    config_path: str | None = None
    new: bool = False
    mode: str | None = None
    model: str | None = None
    raw: bool = False
    permissions: str | None = None  # --permissions MODE (else PERMISSIONS.MODE)
