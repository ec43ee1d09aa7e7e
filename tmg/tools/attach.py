"""Files a prompt names as `@path`, read and attached to it (the REPL and a one-shot alike).

Grammar: like an MCP resource reference (tmg.mcp.resource_refs), an `@` at the start of the prompt
or after whitespace, a bracket or a quote, then the path up to the next whitespace, less trailing
sentence punctuation; `@"a path with spaces"` quotes one. It names a file only when that file or
folder exists (relative to the working folder, absolute, or `~/...`): `@someone` stays text, and
a word shaped like a path that names nothing (`@src/mian.py`) costs one warning. `@@path` escapes:
sent with one `@`, nothing read. `@server:uri` is the MCP resource's, never a file's.

Judged as the user's own read: each file goes through the permission engine as a `read_file` of
its path (tmg.permissions), so a DENY rule refuses it and a file that holds secrets by nature asks
(a one-shot cannot ask: refused, with the line naming what would allow it). Unlike the model's
read_file, a path outside the working folder is allowed: the user named it. What is attached is
material, not the user's words: the engine gets it as the message's extra text (never learned from).

What is sent, after the prompt, one block per file: text bounded (MAX_FILE_CHARS, MAX_TOTAL_CHARS
for all of them; the cut said to the model and to the user), a folder's listing (MAX_ENTRIES), an
image as an image part when the model takes images (else the note alone, said once), any other
binary named by type and size.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from tmg import media
from tmg.llm.gateway import ProviderSpec
from tmg.llm.tool_images import takes_images
from tmg.mcp.resource_refs import Attached
from tmg.permissions.action import PermissionGate, ToolAction
from tmg.tools.content import SNIFF_BYTES, binary_kind
from tmg.permissions.sensitive import SensitivePaths

MAX_FILES = 8
MAX_FILE_CHARS = 20_000
MAX_TOTAL_CHARS = 60_000
MAX_ENTRIES = 200
_TRAILING = ".,;:!?)]}>'\""
_REF = re.compile(r"(?<![^\s(\[{\"'])(@@?)(?:\"([^\"\n]+)\"|(\S+))")
_IMAGE_TYPES = {"PNG image": "image/png", "JPEG image": "image/jpeg", "GIF image": "image/gif"}
_RESOURCE_SHAPE = re.compile(r"[\w.-]+:[A-Za-z][\w+.-]*://")  # server:scheme://...
_PATHLIKE = re.compile(r"/|\.[A-Za-z0-9]{1,8}$")  # a slash, or a file extension


@dataclass(frozen=True)
class FileRef:
    typed: str  # as written after the @
    path: Path  # resolved


class FileAttacher:
    """Finds, judges and reads the `@path` files of a prompt."""

    def __init__(self, cwd: Path, gate: PermissionGate, sensitive: SensitivePaths,
                 warn: Callable[[str], None], provider: Callable[[], ProviderSpec],
                 note: Callable[[str], None] | None = None) -> None:
        self._cwd = cwd
        self._gate = gate
        self._sensitive = sensitive
        self._warn = warn  # what went wrong: a file not attached, a path naming nothing
        self._note = note or warn  # what the user should know: a file cut, an image sent as a note
        self._provider = provider  # the one the prompt goes to: does it take images?
        self._images_said = False

    def find(self, text: str, servers: Iterable[str] = ()) -> tuple[str, list[FileRef]]:
        """The prompt to send (`@@` escapes undone) and the files it names, in order, each once."""
        if "@" not in text:
            return text, []
        servers = set(servers)
        refs: list[FileRef] = []

        def one(match: re.Match[str]) -> str:
            ats, quoted, bare = match.groups()
            word = quoted if quoted is not None else bare.rstrip(_TRAILING)
            if not word or word.partition(":")[0] in servers and ":" in word or _RESOURCE_SHAPE.match(word):
                # an MCP resource, or one's shape after a name no server has (resource_refs says
                # that typo); `@@server:` is resource_refs' to undo
                return match.group(0)
            if ats == "@@":
                return match.group(0)[1:]
            path = self._locate(word)
            if path is None:
                if _PATHLIKE.search(word) and not word.startswith(("http:", "https:")):
                    self._warn(f"@{word} names no file or folder here ({self._cwd}); it is sent as typed")
                return match.group(0)
            ref = FileRef(word, path)
            if ref not in refs:
                refs.append(ref)
            return match.group(0)

        return _REF.sub(one, text), refs

    def _locate(self, word: str) -> Path | None:
        try:
            path = (self._cwd / Path(word).expanduser()).resolve()
            return path if path.exists() else None
        except (OSError, RuntimeError, ValueError):
            return None

    async def attach(self, text: str, servers: Iterable[str] = (), typed: str | None = None) -> tuple[str, Attached]:
        """The prompt to send and what its `@path` files attach (judged, read, bounded). ``typed``:
        the part the user typed, when ``text`` holds more (a one-shot's argument before its piped
        stdin): only that part names files, so piped text cannot attach any."""
        if typed is None:
            text, refs = self.find(text, servers)
        elif text.startswith(typed):
            head, refs = self.find(typed, servers)
            text = head + text[len(typed):]
        else:
            refs = []
        attached = Attached()
        if len(refs) > MAX_FILES:
            self._warn(f"the prompt names {len(refs)} files; only the first {MAX_FILES} are attached")
            refs = refs[:MAX_FILES]
        room = MAX_TOTAL_CHARS
        for ref in refs:
            verdict = await self._gate.check(ToolAction(
                "read_file", "read", paths=(str(ref.path),), preview=f"attach @{ref.typed} to the prompt",
                sensitive=self._sensitive.reason(ref.path)))
            if not verdict.allowed:
                self._warn(f"@{ref.typed} was not attached ({verdict.reason}); the prompt is sent without it")
                attached.blocks.append(f"--- file @{ref.typed} was not attached ({verdict.reason}) ---")
                continue
            block, used = self._block(ref, room, attached.images)
            room -= used
            attached.blocks.append(block)
        return text, attached

    def _block(self, ref: FileRef, room: int, images: list[media.Image]) -> tuple[str, int]:
        """The block for one file, and the characters of text it used."""
        head = f"--- file @{ref.typed} ({ref.path}) ---"
        tail = f"--- end of file @{ref.typed} ---"
        try:
            if ref.path.is_dir():
                body = _listing(ref.path)
                return f"{head}\n{body}\n{tail}", len(body)
            with ref.path.open("rb") as f:
                size = f.seek(0, 2)
                f.seek(0)
                sniff = f.read(SNIFF_BYTES)
                kind = binary_kind(ref.path, sniff)
                if kind is not None:
                    return f"{head}\n{self._binary(ref, kind, size, f, images)}\n{tail}", 0
                f.seek(0)
                limit = min(MAX_FILE_CHARS, max(0, room))
                raw = f.read(limit * 4 + 4)  # UTF-8: at most 4 bytes a character
        except OSError as exc:
            self._warn(f"@{ref.typed} could not be read ({exc.strerror or exc}); the prompt is sent without it")
            return f"--- file @{ref.typed} could not be read ({exc.strerror or exc}) ---", 0
        text = raw.decode("utf-8", errors="replace")
        whole = len(raw) >= size
        if whole and len(text) <= limit:
            return f"{head}\n{text.rstrip()}\n{tail}", len(text)
        shown = text[:limit]
        lines = shown.count("\n") + 1
        note = (f"[cut: the first {len(shown):,} characters ({lines:,} lines) of {size:,} bytes are attached; "
                "read the rest with read_file (offset/limit)]")
        self._note(f"@{ref.typed}: attached the first {len(shown):,} characters of {size:,} bytes "
                   f"(an attachment is at most {MAX_FILE_CHARS:,}, all of a prompt's {MAX_TOTAL_CHARS:,})")
        return f"{head}\n{shown.rstrip()}\n{note}\n{tail}", len(shown)

    def _binary(self, ref: FileRef, kind: str, size: int, f, images: list[media.Image]) -> str:
        mime = _IMAGE_TYPES.get(kind) or ("image/webp" if ref.path.suffix.lower() == ".webp" else None)
        if mime is None:
            return f"[{kind}, {size:,} bytes: not attached as text]"
        if size * 4 // 3 + 4 > media.MAX_IMAGE_B64_CHARS:
            self._warn(f"@{ref.typed} is too large to attach ({media.size_text(size * 4 // 3)}; at most "
                       f"{media.size_text(media.MAX_IMAGE_B64_CHARS)}); the prompt names it only")
            return f"[image: {mime}, {size:,} bytes, too large to attach]"
        f.seek(0)
        data = base64.b64encode(f.read()).decode("ascii")
        note = media.placeholder("image", mime, len(data))
        provider = self._provider()
        if not takes_images(provider):
            if not self._images_said:
                self._images_said = True
                self._note(f"model {provider.model} does not take images (PROVIDERS.{provider.name}.IMAGES: true says "
                           f"it does); @{ref.typed} is sent as a note only")
            return f"{note} (the model does not take images: only this note is sent)"
        images.append(media.Image(mime, data))
        return f"{note} (attached as an image)"


def _listing(folder: Path) -> str:
    try:
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        return f"[the folder could not be listed: {exc.strerror or exc}]"
    shown = [p.name + ("/" if p.is_dir() else "") for p in entries[:MAX_ENTRIES]]
    more = len(entries) - len(shown)
    return "\n".join(shown + ([f"[... {more} more entries]"] if more > 0 else [])) or "[an empty folder]"
