"""MCP resources named in a prompt as `@<server>:<uri>`, read and attached to it.

Grammar (docs/mcp-capabilities.md): a reference starts at the start of the prompt, after
whitespace or after an opening bracket or quote, with `@`, then the name of a configured MCP tool server (one whose tools this
session offers), then `:`, then the URI: every character up to the next whitespace, less
trailing sentence punctuation (`.,;:!?` and closing brackets or quotes), so "summarise
@docs:file:///a.md." names `file:///a.md`. Anything else is left as typed: an email `a@b.c`,
`@someone`, `@x:y` when no server is named x. `@@<server>:` escapes it: the prompt is sent with
one `@` and nothing is read.

What is sent: the prompt as typed, then one block per resource, in order:

    --- resource @everything:demo://resource/static/document/architecture.md ---
    [resource demo://resource/static/document/architecture.md (text/markdown)]
    ...its text, at most MAX_RESOURCE_TEXT_CHARS, the cut said...
    --- end of resource @everything:demo://resource/static/document/architecture.md ---

An image blob travels as an image part of the prompt (as tool images do, when the model takes
images; else its note), other blobs are named with type and size. That whole text is the user
message stored in history: a resumed session sends what was sent.

A reference that cannot be read (no answer in time, an error answer, a server not ready, a WARM
server) costs one warning line naming it, and the prompt still goes, with a line in place of the
block saying the resource could not be read. Going on rather than refusing: the user's words and
the other resources are still worth an answer, the line tells the model the content is missing
(it says so instead of guessing), and the warning tells the user what to fix before asking again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tmg import media

MAX_REFERENCES = 8  # resources read for one prompt; further references are said, not read
MAX_BLOCK_CHARS = 2 * media.MAX_RESOURCE_TEXT_CHARS  # one reference's block, all its contents together
_TRAILING = ".,;:!?)]}>'\""


@dataclass(frozen=True)
class ResourceRef:
    """`@server:uri` as typed."""

    server: str
    uri: str

    def __str__(self) -> str:
        return f"@{self.server}:{self.uri}"


@dataclass
class Attached:
    """What a prompt carries besides the user's words: the text blocks and the images."""

    blocks: list[str] = field(default_factory=list)
    images: list[media.Image] = field(default_factory=list)

    def text(self, typed: str) -> str:
        """The user message as sent and stored: the prompt, then its resource blocks."""
        return "\n\n".join([typed, *self.blocks]) if self.blocks else typed


def _pattern(servers: Iterable[str]) -> re.Pattern[str] | None:
    names = sorted(set(servers), key=len, reverse=True)  # the longest name first: `a-b` before `a`
    if not names:
        return None
    return re.compile(r"(?<![^\s(\[{\"'])(@@?)(" + "|".join(map(re.escape, names)) + r"):(\S+)")


def find_refs(text: str, servers: Iterable[str]) -> tuple[str, list[ResourceRef]]:
    """The prompt to send (escapes `@@` undone) and the references in it, in order, each once."""
    pattern = _pattern(servers)
    if pattern is None or "@" not in text:
        return text, []
    refs: list[ResourceRef] = []

    def one(match: re.Match[str]) -> str:
        ats, server, rest = match.groups()
        if ats == "@@":  # escaped: sent with one @, never read
            return match.group(0)[1:]
        uri = rest.rstrip(_TRAILING)
        if uri:
            ref = ResourceRef(server, uri)
            if ref not in refs:
                refs.append(ref)
        return match.group(0)

    return pattern.sub(one, text), refs


# `@name:scheme://...` naming no server: most likely a typo of a server's name, worth a word.
_URI_LIKE = re.compile(r"(?<![^\s(\[{\"'@])@([A-Za-z0-9_.-]+):[A-Za-z][A-Za-z0-9+.-]*://\S")


def unknown_servers(text: str, servers: Iterable[str]) -> list[str]:
    """Names in `@name:scheme://...` words that are no server's (said, not read: the prompt
    goes as typed); an escaped `@@name:` is not one."""
    known = set(servers)
    found: list[str] = []
    for match in _URI_LIKE.finditer(text):
        name = match.group(1)
        escaped = match.start() > 0 and text[match.start() - 1] == "@"
        if name not in known and name not in found and not escaped:
            found.append(name)
    return found


def resource_block(ref: ResourceRef, result: dict[str, Any], images: list[media.Image]) -> str:
    """A resources/read result (wire form) as the block sent after the prompt; image blobs join `images`."""
    from tmg.mcp.result_content import resource_text

    contents = [c for c in result.get("contents") or [] if isinstance(c, dict)]
    body = "\n".join(resource_text(c, images) for c in contents) or "[the server sent no content]"
    body = media.scrub_base64(body)
    if len(body) > MAX_BLOCK_CHARS:
        body = body[:MAX_BLOCK_CHARS] + f"\n[truncated: {len(body) - MAX_BLOCK_CHARS} more characters]"
    return f"--- resource {ref} ---\n{body}\n--- end of resource {ref} ---"


def missing_block(ref: ResourceRef, reason: str) -> str:
    """What the model is told in place of a resource that could not be read."""
    return f"--- resource {ref} could not be read ({reason}); its content is not included ---"
