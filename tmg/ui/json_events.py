"""Engine events as JSON on stdout, for programs (``--output-format json|stream-json``).

``stream-json``: one JSON object a line as the prompt runs: ``init`` (session id, model), ``text``
deltas, ``tool_use`` and ``tool_result``, ``notice``, ``usage`` per model call, and a final
``result``. ``json``: only that ``result``, once. docs/output-format.md has the schema (each
field), docs/output-format.schema.json the same as JSON Schema (the tests validate against it).

stdout carries nothing else, whatever happens: a refusal is a ``tool_result``, a failure is the
``result`` (with its exit code) besides the one line on stderr. Tool output, notices and errors
are redacted as stderr is.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import IO, Any, Callable

from tmg.engine.turn import Turn
from tmg.errors import BudgetLimitError, TurnLimitError
from tmg.llm.gateway import Usage
from tmg.tools.registry import ToolResult
from tmg.ui.answer import discard_output

VERSION = 1


class NoAnswer:
    """The answer sink of a JSON run: the answer goes into the JSON, nowhere else."""

    def feed(self, delta: str) -> None: ...
    def finish(self) -> None: ...


class JsonEvents:
    """An EngineEvents sink writing JSON to ``out``; ``finish`` writes the result, once."""

    def __init__(self, out: IO[str], *, stream: bool, redact: Callable[[str], str] = lambda s: s) -> None:
        self._out = out
        self._stream = stream
        self._redact = redact
        self._started = time.monotonic()
        self._session: dict[str, Any] = {"session_id": None, "model": None}
        self._answer = ""
        self._turns = 0
        self._tokens = {"input_tokens": 0, "output_tokens": 0}
        self._cost: float | None = 0.0
        self._calls: list[dict[str, Any]] = []
        self._pending: list[tuple[str, int]] = []  # (id, turn) of the calls asked for, not yet run
        self._notices: list[str] = []
        self._finished = False
        self._reader_gone = False

    @property
    def streams(self) -> bool:
        """Whether events go out as they happen (stream-json): text written cannot be taken back."""
        return self._stream

    # -- the run --

    def start(self, *, session_id: str, model: str, provider: str, mode: str, cwd: str, permission_mode: str) -> None:
        self._session = {"session_id": session_id, "model": model}
        self._emit({"type": "init", "version": VERSION, "session_id": session_id, "model": model,
                    "provider": provider, "mode": mode, "cwd": cwd, "permission_mode": permission_mode})

    def finish(self, error: BaseException | None = None, exit_code: int = 0) -> None:
        """The ``result``: success (``exit_code`` 1 when a tool call was refused, as the process
        exits), or what stopped the run (``error``) with the exit code it gets."""
        if self._finished:
            return
        self._finished = True
        subtype, code = _outcome(error)
        code = code or exit_code
        self._write({
            "type": "result", "version": VERSION, "subtype": subtype, "is_error": error is not None,
            "exit_code": code, "result": self._answer, "error": self._redact(_message(error)) if error else None,
            **self._session, "num_turns": self._turns, "usage": dict(self._tokens),
            "total_cost_usd": self._cost, "tool_calls": self._calls, "notices": self._notices,
            "duration_ms": int((time.monotonic() - self._started) * 1000),
        })

    # -- EngineEvents --

    def on_text(self, delta: str) -> None:
        if delta:
            self._emit({"type": "text", "delta": delta})

    def on_answer(self, turn: Turn) -> None:
        completion = turn.completion
        calls = completion.tool_calls if completion is not None else []
        self._session["model"] = turn.model or self._session["model"]
        for call in calls:
            self._pending.append((call.id, turn.index))
            self._emit({"type": "tool_use", "turn": turn.index, "id": call.id, "name": call.name,
                        "input": _input(call.arguments)})
        if not calls:
            self._answer = turn.response_text  # the last answer without tool calls is the prompt's

    def on_interrupted(self, partial: str, turn: Turn) -> None:
        self.on_notice("answer interrupted")

    def on_turn_end(self, turn: Turn) -> None:
        self._turns = max(self._turns, turn.index)

    def on_tool(self, name: str, arguments: str, result: ToolResult) -> None:
        # The engine runs a turn's calls in the order it asked for them: the oldest pending is this one.
        call_id, index = self._pending.pop(0) if self._pending else ("", self._turns + 1)
        output = self._redact(result.content)
        self._calls.append({"id": call_id, "name": name, "input": _input(arguments), "is_error": result.is_error,
                            "output": output})
        self._emit({"type": "tool_result", "turn": index, "id": call_id, "name": name, "is_error": result.is_error,
                    "output": output, "images": len(result.images)})

    def on_usage(self, usage: Usage, turn: Turn) -> None:
        known = usage.reported
        if known:
            self._tokens["input_tokens"] += usage.prompt_tokens
            self._tokens["output_tokens"] += usage.completion_tokens
        self._cost = None if self._cost is None or usage.cost is None else self._cost + usage.cost
        self._emit({"type": "usage", "turn": turn.index, "model": turn.model,
                    "input_tokens": usage.prompt_tokens if known else None,
                    "output_tokens": usage.completion_tokens if known else None, "cost_usd": usage.cost})

    def on_notice(self, message: str) -> None:
        text = self._redact(message)
        self._notices.append(text)
        self._emit({"type": "notice", "message": text})

    def on_summary(self, record: dict) -> None:
        self.on_notice("context: older turns were summarised; what is sent starts from the summary")

    # -- writing --

    def _emit(self, event: dict[str, Any]) -> None:
        if self._stream:
            self._write(event)

    def _write(self, event: dict[str, Any]) -> None:
        if self._reader_gone:
            return
        try:
            self._out.write(json.dumps(event, ensure_ascii=False) + "\n")
            self._out.flush()
        except BrokenPipeError:  # the reader went away: the run goes on, quietly (as PlainAnswer)
            self._reader_gone = True
            discard_output(self._out)


def _input(arguments: str) -> Any:
    """The call's arguments: their JSON object, else the text the model sent."""
    try:
        value = json.loads(arguments or "{}", strict=False)
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def _outcome(error: BaseException | None) -> tuple[str, int]:
    """(subtype, exit code) by what stopped the run, named as Claude Code's result subtypes are."""
    if error is None:
        return "success", 0
    if isinstance(error, (KeyboardInterrupt, asyncio.CancelledError)):
        return "interrupted", 130
    if isinstance(error, TurnLimitError):
        return "error_max_turns", 1
    if isinstance(error, BudgetLimitError):
        return "error_max_budget_usd", 1
    return "error", int(getattr(error, "exit_code", 1))


def _message(error: BaseException) -> str:
    if isinstance(error, (KeyboardInterrupt, asyncio.CancelledError)):
        return "interrupted"
    return str(error) or type(error).__name__
