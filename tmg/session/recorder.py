"""Engine events written into the session's transcript."""

from __future__ import annotations

from tmg.engine.turn import Turn
from tmg.llm.gateway import Usage
from tmg.session.transcript import Transcript
from tmg.media import summary
from tmg.tools.registry import ToolResult


class TranscriptRecorder:
    def __init__(self, transcript: Transcript) -> None:
        self._t = transcript
        self._memory_for: int | None = None  # the prompt whose recall is written already

    def on_text(self, delta: str) -> None:
        pass  # the whole answer is written once, at on_answer

    def on_answer(self, turn: Turn) -> None:
        ids = turn.meta.get("memory_ids")
        if ids and self._memory_for != turn.prompt_id:
            # Once per prompt (the injector asks once per prompt), before the answer it shaped.
            self._memory_for = turn.prompt_id
            self._t.memory(ids)
        if turn.response_text.strip():
            self._t.answer(turn.response_text, turn.model, turn.index)

    def on_interrupted(self, partial: str, turn: Turn) -> None:
        self._t.interrupted(partial, turn.model, turn.index)

    def on_turn_end(self, turn: Turn) -> None:
        pass  # the answer is written at on_answer

    def on_tool(self, name: str, arguments: str, result: ToolResult) -> None:
        outcome = ("error: " + result.content[:160]) if result.is_error else summary(result.content, result.images)
        self._t.tool_call(name, arguments, outcome)

    def on_usage(self, usage: Usage, turn: Turn) -> None:
        self._t.usage(usage.prompt_tokens, usage.completion_tokens, usage.cost, usage.reported)

    def on_notice(self, message: str) -> None:
        self._t.notice(message)

    def on_summary(self, record: dict) -> None:
        self._t.summary(record.get("content") or "", (record.get("meta") or {}).get("summary") or {})
