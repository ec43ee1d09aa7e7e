"""A queue-driven fake model gateway that records what it was sent."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

from tmg.llm.gateway import Completion, CompletionRequest, GatewayError, ToolCallRequest, Usage


def text(s: str, prompt_tokens: int = 10, completion_tokens: int = 5, cost: float | None = 0.001) -> Completion:
    return Completion(text=s, tool_calls=[], usage=Usage(prompt_tokens, completion_tokens, cost), finish_reason="stop")


def tool_call(name: str, args: dict[str, Any], call_id: str = "call_1") -> Completion:
    return Completion(text="", tool_calls=[ToolCallRequest(call_id, name, json.dumps(args))],
                      usage=Usage(10, 5, 0.001), finish_reason="tool_calls")


class CutOff:
    """Streams ``text``, then fails with ``error`` (a connection dropped mid-answer)."""

    def __init__(self, text: str, error: GatewayError) -> None:
        self.text, self.error = text, error


class FakeModel:
    """Replies from a FIFO queue: a Completion is streamed word by word, a GatewayError raised.

    An empty queue is a test bug and fails loudly. ``repeat_last`` replays the last reply
    forever (an endless tool loop).
    """

    def __init__(self, *replies: Completion | GatewayError | CutOff, repeat_last: bool = False, delay: float = 0.0) -> None:
        self.queue: list[Completion | GatewayError | CutOff] = list(replies)
        self.repeat_last = repeat_last
        self.delay = delay
        self.requests: list[CompletionRequest] = []
        self.closed = False

    @property
    def calls(self) -> int:
        return len(self.requests)

    def sent_messages(self, call: int = -1) -> list[dict[str, Any]]:
        return self.requests[call].messages

    async def complete(self, request: CompletionRequest, on_text) -> Completion:
        self.requests.append(CompletionRequest(request.provider, copy.deepcopy(request.messages), request.tools))
        if not self.queue:
            raise AssertionError("FakeModel: no reply queued for this call")
        reply = self.queue[0] if (self.repeat_last and len(self.queue) == 1) else self.queue.pop(0)
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(reply, GatewayError):
            raise reply
        if isinstance(reply, CutOff):
            on_text(reply.text)
            raise reply.error
        for i, word in enumerate(reply.text.split(" ")):
            on_text(word if i == 0 else " " + word)
        return reply

    async def aclose(self) -> None:
        self.closed = True
