"""An MCP server's sampling request (sampling/createMessage), answered by the session's model
under consent (issue 15, item 11).

Only a server whose config says `SAMPLING: true` is told at initialize that tmg takes such
requests (an untrusted project's MCP_SERVERS are withheld whole: tmg.config.trust); every other
server's request is declined. Each request goes through the permission engine as the action
`sampling_<server>` with effect "sample": asked in the REPL (the server's messages shown),
refused in a one-shot with one line naming what allows it (`PERMISSIONS.ALLOW:
[sampling_<server>]`, or --permissions yolo); a `mcp_<server>_*` rule does not cover it. When
allowed, the session's model makes one completion of the server's messages (its system prompt
first), at most `maxTokens` tokens and never more than MAX_SAMPLING_TOKENS, with no tools; the
answer goes back to the server as text. A refusal or a failed model call is an error answer to
the server, whose tool then says what it does with that.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from tmg.mcp.errors import SamplingDeclined
from tmg.permissions.action import PermissionGate, ToolAction
from tmg import media

MAX_SAMPLING_TOKENS = 4096  # a server may ask for less, never more
DEFAULT_SAMPLING_TOKENS = 1024  # when a request names no maxTokens (the spec requires it; some omit it)
MAX_PREVIEW_CHARS = 2000
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

# One completion of the chat's model: (messages, max tokens) -> (text, model, finish reason or None).
Complete = Callable[[list[dict[str, Any]], int], Awaitable[tuple[str, str, "str | None"]]]


def sampling_tool(server: str) -> str:
    """The name a permission rule gives a server's sampling: `sampling_<server>`."""
    return _UNSAFE.sub("_", f"sampling_{server}")


def chat_messages(params: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's messages (wire form) as chat messages: its system prompt first, then each
    message's text; an image or audio item is named (the server's words only go to the model)."""
    messages: list[dict[str, Any]] = []
    if params.get("systemPrompt"):
        messages.append({"role": "system", "content": str(params["systemPrompt"])})
    for message in params.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        items = content if isinstance(content, list) else [content]
        texts = []
        for item in items:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "text":
                texts.append(str(item.get("text", "")))
            else:
                data = str(item.get("data", ""))
                texts.append(media.placeholder(str(item.get("type") or "content"), str(item.get("mimeType", "")),
                                               len(data), "not passed on"))
        role = "assistant" if message.get("role") == "assistant" else "user"
        messages.append({"role": role, "content": media.scrub_base64("\n".join(texts))})
    return messages


def token_bound(params: dict[str, Any]) -> int:
    """The request's maxTokens, bounded by MAX_SAMPLING_TOKENS."""
    asked = params.get("maxTokens")
    if not isinstance(asked, (int, float)) or asked < 1:
        return DEFAULT_SAMPLING_TOKENS
    return min(int(asked), MAX_SAMPLING_TOKENS)


def preview(messages: list[dict[str, Any]], max_tokens: int) -> str:
    """What the consent prompt shows: the messages the model would get, and the bound."""
    lines = [f"{m['role']}: {m['content']}" for m in messages]
    text = "\n".join(lines)
    if len(text) > MAX_PREVIEW_CHARS:
        text = text[:MAX_PREVIEW_CHARS] + f"\n... {len(text) - MAX_PREVIEW_CHARS} more characters"
    return f"{text}\n(answer of at most {max_tokens} tokens, sent back to the server)"


class ModelSampler:
    """Answers a server's sampling requests with the session's model, each judged by `gate`."""

    def __init__(self, gate: PermissionGate, complete: Complete, *, consent: frozenset[str] = frozenset()) -> None:
        self._gate = gate
        self._complete = complete
        self._consent = consent  # servers marked REQUIRES_CONSENT: asked every time, rules or not

    async def __call__(self, server: str, params: dict[str, Any]) -> tuple[str, str, str]:
        messages = chat_messages(params)
        if not any(m["role"] != "system" for m in messages):
            raise SamplingDeclined("the sampling request has no messages")
        bound = token_bound(params)
        action = ToolAction(sampling_tool(server), "sample", server=server, preview=preview(messages, bound),
                            requires_consent=server in self._consent)
        verdict = await self._gate.check(action)
        if not verdict.allowed:
            raise SamplingDeclined(f"the user did not allow it ({verdict.reason})")
        try:
            text, model, finish = await self._complete(messages, bound)
        except Exception as exc:  # noqa: BLE001 - the model call's failure is the server's answer
            raise SamplingDeclined(f"the model call failed: {' '.join(str(exc).split())[:300]}") from exc
        return text, model, "maxTokens" if finish == "length" else "endTurn"

