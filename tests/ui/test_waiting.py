"""The waiting line names the running tool, counts seconds, and leaves nothing behind."""

from __future__ import annotations

import asyncio
import io

from tmg.engine.phases import Phase
from tmg.engine.turn import Turn
from tmg.llm.gateway import Completion, ToolCallRequest, Usage
from tmg.ui.waiting import WaitingLine


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


async def _until(predicate) -> None:
    for _ in range(400):
        if predicate():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the waiting line never showed")


async def test_a_running_tool_is_named_and_the_line_is_wiped_when_it_ends() -> None:
    err = Tty()
    line = WaitingLine(err, enabled=True)
    turn = Turn(1, 1, "q", "s", "default")
    turn.completion = Completion("", [ToolCallRequest("c1", "mcp_web_fetch", "{}")], Usage())
    line.on_phase_transition(Phase.INFERENCE, Phase.EXECUTING, turn)
    await _until(lambda: "running mcp_web_fetch · 0s" in err.getvalue())
    line.on_phase_transition(Phase.EXECUTING, Phase.PERSISTING, turn)
    assert err.getvalue().endswith("\r\x1b[2K")


async def test_a_disabled_line_writes_nothing() -> None:
    err, twin_err = Tty(), Tty()
    line, twin = WaitingLine(err, enabled=False), WaitingLine(twin_err, enabled=True)
    line.on_phase_transition(Phase.REFINING, Phase.INFERENCE, None)
    twin.on_phase_transition(Phase.REFINING, Phase.INFERENCE, None)
    # Waited for as long as an enabled line takes to draw, not a fixed time.
    await _until(lambda: "waiting for the model" in twin_err.getvalue())
    line.on_text("x")
    twin.on_text("x")
    assert err.getvalue() == ""
