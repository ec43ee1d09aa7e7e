"""What the engine tells the outside world while a prompt runs (the UI and the transcript)."""

from __future__ import annotations

from typing import Protocol

from tmg.engine.turn import Turn
from tmg.llm.gateway import Usage
from tmg.tools.registry import ToolResult


class EngineEvents(Protocol):
    def on_text(self, delta: str) -> None:
        """A streamed piece of the answer."""

    def on_answer(self, turn: Turn) -> None:
        """A turn's model message is complete (text and/or tool calls)."""

    def on_interrupted(self, partial: str, turn: Turn) -> None:
        """The user cancelled the turn while the answer streamed."""

    def on_turn_end(self, turn: Turn) -> None:
        """The turn is over: its messages are durable in history and the after-turn hooks
        (memory's ring) have run, or it failed. The screen shows the last of the answer only
        now, so an answer seen in full is an answer stored."""

    def on_tool(self, name: str, arguments: str, result: ToolResult) -> None: ...

    def on_usage(self, usage: Usage, turn: Turn) -> None: ...

    def on_notice(self, message: str) -> None:
        """Something the user should know (a retry, a warning): stderr and transcript."""

    def on_summary(self, record: dict) -> None:
        """Older turns were summarised: ``record`` is the stored summary (the transcript marks it)."""


class NullEvents:
    """Events nobody listens to (tests, background runs)."""

    def on_text(self, delta: str) -> None: ...
    def on_answer(self, turn: Turn) -> None: ...
    def on_interrupted(self, partial: str, turn: Turn) -> None: ...
    def on_turn_end(self, turn: Turn) -> None: ...
    def on_tool(self, name: str, arguments: str, result: ToolResult) -> None: ...
    def on_usage(self, usage: Usage, turn: Turn) -> None: ...
    def on_notice(self, message: str) -> None: ...
    def on_summary(self, record: dict) -> None: ...


class FanOut:
    """Sends every event to each sink in order (the screen first, then the transcript); a sink
    without a handler for an event does not listen to it (the screen ignores summaries)."""

    def __init__(self, *sinks: EngineEvents) -> None:
        self._sinks = sinks

    def __getattr__(self, name: str):
        if not name.startswith("on_"):
            raise AttributeError(name)

        def call(*args):
            for sink in self._sinks:
                handler = getattr(sink, name, None)
                if handler is not None:
                    handler(*args)

        return call
