"""The waiting line: a spinner and the seconds elapsed on stderr while nothing else shows.

Drawn while the model has not sent its first token and while a tool runs, so a slow provider
or a 60 s tool call does not look like a hang; a tool that reports progress (MCP progress
notifications) has it shown on the line. Only on a terminal (never into a pipe or a
file), and always cleared before anything else is written: the answer, a notice, a tool line.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from tmg.engine.events import NullEvents
from tmg.engine.phases import Phase
from tmg.engine.turn import Turn

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_FIRST_DRAW = 0.3  # seconds: a quick answer shows no flicker
_TICK = 0.125
_CLEAR = "\r\x1b[2K"


class WaitingLine(NullEvents):
    """An engine hook (phase changes start and stop it) and an events sink (the first text,
    an answer, a notice stop it; put it first in a fan-out). Inert when ``enabled`` is False."""

    def __init__(self, err: IO[str], enabled: bool) -> None:
        self._err = err
        self.enabled = enabled
        self._task: asyncio.Task | None = None
        self._drawn = False
        self._progress = ""  # the running tool's last progress report, shown after the label
        self._held = 0  # while a question is put to the user, the line stays off the screen

    # -- the engine's phases --------------------------------------------------------------

    def on_phase_transition(self, old: Phase, new: Phase, state: object) -> None:
        if new is Phase.INFERENCE:
            self.start("waiting for the model")
        elif new is Phase.EXECUTING and isinstance(state, Turn) and state.completion is not None:
            names = ", ".join(dict.fromkeys(c.name for c in state.completion.tool_calls))
            self.start(f"running {names}")
        else:
            self.stop()

    # -- events that put something on the screen -----------------------------------------

    def on_text(self, delta: str) -> None:
        self.stop()

    def on_answer(self, turn: Turn) -> None:
        self.stop()

    def on_interrupted(self, partial: str, turn: Turn) -> None:
        self.stop()

    def on_notice(self, message: str) -> None:
        self.clear()

    # -- the line itself ------------------------------------------------------------------

    def progress(self, tool: str, done: float, total: float | None, message: str | None) -> None:
        """A running tool reported progress: shown on the line from its next tick."""
        amount = f"{done:g}/{total:g}" if total else f"{done:g}"
        self._progress = f" · {tool} {amount}" + (f" {' '.join(message.split())[:60]}" if message else "")

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Keep the line off the screen (a server's question is being answered below it)."""
        self._held += 1
        self.clear()
        try:
            yield
        finally:
            self._held -= 1

    def start(self, label: str) -> None:
        self.stop()
        self._progress = ""
        if not self.enabled:
            return
        try:
            self._task = asyncio.get_running_loop().create_task(self._spin(label, time.monotonic()))
        except RuntimeError:  # no running loop: nothing to animate with
            self._task = None

    def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        self.clear()

    def clear(self) -> None:
        """Wipe the line (it comes back at the next tick while still waiting)."""
        if self._drawn:
            self._drawn = False
            self._write(_CLEAR)

    async def _spin(self, label: str, since: float) -> None:
        await asyncio.sleep(_FIRST_DRAW)
        frame = 0
        while True:
            if self._held:
                await asyncio.sleep(_TICK)
                continue
            elapsed = int(time.monotonic() - since)
            self._write(f"{_CLEAR}{_FRAMES[frame % len(_FRAMES)]} {label}{self._progress} · {elapsed}s")
            self._drawn = True
            frame += 1
            await asyncio.sleep(_TICK)

    def _write(self, text: str) -> None:
        try:
            self._err.write(text)
            self._err.flush()
        except (OSError, ValueError):  # the terminal went away
            self.enabled = False
