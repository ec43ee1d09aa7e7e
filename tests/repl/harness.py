"""A REPL under test: scripted entries, a streaming fake model, real sessions on disk.

The REPL, its sessions, engine, history and transcript are the real ones; only the terminal
(a :class:`ScriptedReader` instead of prompt-toolkit) and the model gateway are doubles.
"""

from __future__ import annotations

import asyncio
import copy
import io
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from tmg.compose import open_session
from tmg.session.options import ChatOptions
from tmg.environment import Environment
from tmg.llm.gateway import Completion, CompletionRequest, GatewayError, Usage
from tmg.repl.loop import Repl

SECRET = "sk-unit-secret-7c1d2e"


@dataclass(frozen=True)
class Reply:
    """Text streamed word by word; ``cost`` None is an unpriced model."""

    text: str
    prompt_tokens: int = 10
    completion_tokens: int = 5
    cost: float | None = 0.001
    reported: bool = True  # False: the provider sent no usage (llama.cpp)


@dataclass(frozen=True)
class SignalMidStream:
    """Stream ``partial``, then send ``sig`` to this process and wait to be cancelled."""

    partial: str
    sig: int = signal.SIGINT


@dataclass
class StreamingModel:
    """A gateway double: replies from a queue; records requests and whether a stream was cancelled."""

    replies: list[Reply | SignalMidStream | GatewayError] = field(default_factory=list)
    requests: list[CompletionRequest] = field(default_factory=list)
    cancelled: int = 0
    closed: int = 0

    async def complete(self, request: CompletionRequest, on_text) -> Completion:
        self.requests.append(CompletionRequest(request.provider, copy.deepcopy(request.messages), request.tools))
        if not self.replies:
            raise AssertionError("StreamingModel: no reply queued for this call")
        reply = self.replies.pop(0)
        if isinstance(reply, GatewayError):
            raise reply
        if isinstance(reply, SignalMidStream):
            on_text(reply.partial)
            signal.raise_signal(reply.sig)
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled += 1  # where a real gateway closes its HTTP stream
                raise
            raise AssertionError("the signal did not cancel the stream")
        for i, word in enumerate(reply.text.split(" ")):
            on_text(word if i == 0 else " " + word)
            await asyncio.sleep(0)
        return Completion(reply.text, [], Usage(reply.prompt_tokens, reply.completion_tokens, reply.cost,
                                                        reported=reply.reported), "stop")

    async def aclose(self) -> None:
        self.closed += 1


Step = str | BaseException | type | Callable[[], Awaitable[str]]


class ScriptedReader:
    """Entries as a person would type them; an exception is raised as the input layer would
    (EOFError for Ctrl-D, PromptInterrupted for Ctrl-C); a coroutine function is awaited."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)

    async def read(self) -> str:
        if not self.steps:
            raise AssertionError("ScriptedReader: the script ran out (no /exit or Ctrl-D at its end?)")
        step = self.steps.pop(0)
        if isinstance(step, BaseException) or (isinstance(step, type) and issubclass(step, BaseException)):
            raise step
        if callable(step):
            return await step()
        return step


def send_signal_and_wait(sig: int) -> Callable[[], Awaitable[str]]:
    """A step: the process receives ``sig`` while the prompt waits for input."""

    async def step() -> str:
        signal.raise_signal(sig)
        await asyncio.sleep(30)
        raise AssertionError(f"signal {sig} did not end the session")

    return step


class Rig:
    """Runs a REPL in ``tmp_path`` with TMG_HOME and a config of its own."""

    def __init__(self, tmp_path: Path, monkeypatch, model: StreamingModel | None = None) -> None:
        self.root = tmp_path
        self.model = model or StreamingModel()
        self.home = tmp_path / "home"
        self.config = tmp_path / "tmg.yaml"
        self.config.write_text(
            "PROVIDERS:\n  mock:\n    MODEL: openai/mock-model\n"
            f"    API_KEY: {SECRET}\n    URL: http://127.0.0.1:9/v1\n"
        )
        (tmp_path / "work").mkdir(exist_ok=True)
        self.out = io.StringIO()
        self.err = io.StringIO()
        self.ended: list[str] = []  # session ids, one entry per run of a session's end
        self.opened: list[Any] = []
        monkeypatch.setattr("tmg.llm.select.make_gateway", lambda spec: self.model)

    def envr(self) -> Environment:
        env = {"TMG_HOME": str(self.home), "TMG_CONFIG": str(self.config), "TMG_MEMORY_ENABLED": "false"}
        return Environment(stdin=None, stdout=self.out, stderr=self.err, env=env, cwd=self.root / "work",
                           stdin_isatty=False, stdout_isatty=False)

    async def _open(self, *args, **kwargs):
        session = await open_session(*args, **kwargs)
        session.end.add("count the end", lambda: self.ended.append(session.ref.id))
        self.opened.append(session)
        return session

    def run(self, *steps: Step, options: ChatOptions | None = None) -> int:
        reader = ScriptedReader(list(steps))
        self.repl = Repl(options or ChatOptions(), self.envr(), reader=lambda _repl: reader, opener=self._open)
        return asyncio.run(self.repl.run())

    def transcript(self, index: int = 0) -> str:
        return self.opened[index].ref.transcript_path.read_text(encoding="utf-8")

    def history(self, index: int = 0) -> list[dict]:
        import json

        path = self.opened[index].ref.history_path
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
