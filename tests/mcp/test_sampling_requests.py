"""A server's sampling request as the model and the consent prompt get it, and the gate's say."""

from __future__ import annotations

import asyncio

import pytest

from tmg.mcp.errors import SamplingDeclined
from tmg.permissions.action import PermissionGate, ToolAction, Verdict
from tmg.mcp.sampling import MAX_SAMPLING_TOKENS, ModelSampler, chat_messages, sampling_tool, token_bound

REQUEST = {"systemPrompt": "be brief", "maxTokens": 99_999, "messages": [
    {"role": "user", "content": {"type": "text", "text": "what is this?"}},
    {"role": "assistant", "content": [{"type": "text", "text": "an image:"},
                                      {"type": "image", "mimeType": "image/png", "data": "iVBOR" * 10}]},
]}


class Gate(PermissionGate):
    def __init__(self, allow: bool) -> None:
        self.allow, self.seen = allow, []

    async def check(self, action: ToolAction) -> Verdict:
        self.seen.append(action)
        return Verdict(self.allow, "allowed by test" if self.allow else "denied by test")


def test_the_servers_words_become_chat_messages_with_media_named_and_tokens_bounded():
    assert chat_messages(REQUEST) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "what is this?"},
        {"role": "assistant", "content": "an image:\n[image: image/png, 37 bytes, not passed on]"}]
    assert token_bound(REQUEST) == MAX_SAMPLING_TOKENS
    assert token_bound({"maxTokens": 12}) == 12
    assert sampling_tool("my server") == "sampling_my_server"


def test_an_allowed_request_is_answered_and_a_refused_one_never_reaches_the_model():
    calls = []

    async def complete(messages, bound):
        calls.append((messages, bound))
        return "a cat", "openai/m", "length"

    allowed = Gate(True)
    assert asyncio.run(ModelSampler(allowed, complete)("srv", REQUEST)) == ("a cat", "openai/m", "maxTokens")
    (action,) = allowed.seen
    assert (action.tool, action.effect, action.server) == ("sampling_srv", "sample", "srv")
    assert "user: what is this?" in action.preview and f"at most {MAX_SAMPLING_TOKENS} tokens" in action.preview
    assert calls[0][1] == MAX_SAMPLING_TOKENS
    with pytest.raises(SamplingDeclined, match=r"the user did not allow it \(denied by test\)"):
        asyncio.run(ModelSampler(Gate(False), complete)("srv", REQUEST))
    assert len(calls) == 1
