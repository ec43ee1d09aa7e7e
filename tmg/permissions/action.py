"""What a tool call would do, described for the permission engine and shown to the user.

Every tool (built-in or MCP) describes a call before it runs; the registry hands the description
to the one PermissionGate, and the call runs only when the gate allows it (SPEC §7).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# read: looks only (allowed by default); write: changes files; run: executes a command;
# unknown: an MCP tool without annotations (asks by default); sample: an MCP server asks the
# session's model for a completion (asks by default: it spends the user's tokens on the server's words);
# network: fetches a URL (asks by default: what the model sends out, and what it reads, are the user's call).
Effect = Literal["read", "write", "run", "unknown", "sample", "network"]


@dataclass(frozen=True)
class ToolAction:
    tool: str                     # the public tool name, as the model called it
    effect: Effect
    paths: tuple[str, ...] = ()   # resolved paths the call touches (rules match them by glob)
    command: str | None = None    # the shell command line, for `run`
    url: str | None = None        # the URL a `network` call fetches (rules match it by glob)
    # Why the URL needs a rule or an answer naming it even where fetching is allowed broadly:
    # it names a loopback or private address ("127.0.0.1 is a loopback address").
    private: str | None = None
    preview: str = ""             # exactly what will run or change (a command, a diff), for the prompt
    sensitive: str | None = None  # why even a read needs consent (e.g. "holds secrets by nature")
    server: str | None = None     # the MCP server name, for MCP tools
    requires_consent: bool = False  # the server is marked REQUIRES_CONSENT: every call asks
    outside_sandbox: bool = False  # a command to run outside the OS sandbox: asked every time (tmg.tools.sandbox)
    # The call cannot happen whatever anyone says (a path outside the allowed folders): the
    # registry answers with this refusal and nobody is asked about it.
    refusal: str | None = None


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str  # what decided, in words for the transcript ("allowed by rule 'git status'", "denied: read-only mode")
    note: str = ""  # for the model when refused: why, and (one-shot) what would allow it


class PermissionGate:
    """Judges one action. This base allows everything (the behaviour before the engine); the
    permission engine (tmg/permissions/engine.py) replaces it in the composition root."""

    async def check(self, action: ToolAction) -> Verdict:
        return Verdict(True, "allowed (no permission engine)")
