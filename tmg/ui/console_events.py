"""Engine events shown on the terminal: the answer on stdout, the rest on stderr.

While the answer streams it owns the bottom of the terminal (:mod:`tmg.ui.live_region`):
notices print above its live tail. A model call that ends in tool calls has said all it will
say, so its text is made final before the tools run: their lines, the questions they ask and
the waiting line ("running shell · 3s") come after it, never over it. (The turn is stored once
its tools ran; the held-back last character guards the answer a prompt ends with.)
"""

from __future__ import annotations

from tmg.engine.turn import Turn
from tmg.llm.gateway import Usage
from tmg.media import summary
from tmg.tools.registry import ToolResult
from tmg.ui.answer import AnswerSink
from tmg.ui.notices import Notices


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (a raw newline in tool arguments would break the stderr line), cut."""
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "…"


SHOWN_OUTPUT_LINES = 8  # of what a shell command printed, under its line on stderr


def _printed(result: ToolResult) -> str:
    """What a command printed, the first lines of it, indented and with control characters
    escaped (its output cannot redraw the terminal): the user sees what the model sees."""
    lines = [line for line in result.content.splitlines()[1:] if line != "stdout:"]
    if not lines or lines == ["(no output)"]:
        return ""
    shown = ["    " + "".join(c if c.isprintable() or c == "\t" else "?" for c in line[:200]) for line in
             lines[:SHOWN_OUTPUT_LINES]]
    if len(lines) > SHOWN_OUTPUT_LINES:
        shown.append(f"    [... {len(lines) - SHOWN_OUTPUT_LINES} more lines]")
    return "\n" + "\n".join(shown)


def _ok(result: ToolResult) -> str:
    """'ok', saying what came back when it was not text: images, a lone note ('[audio: ...]'), nothing."""
    if result.images:
        return f"ok: {summary(result.content, result.images)}"
    text = result.content.strip()
    if not text:
        return "ok: empty result"
    if text.startswith("[") and text.endswith("]") and "\n" not in text:
        return f"ok: {one_line(text, 100)}"
    return "ok"


class ConsoleEvents:
    def __init__(self, answer: AnswerSink, notices: Notices) -> None:
        self._answer = answer
        self._notices = notices
        self._streaming = False

    def _end_stream(self) -> None:
        if self._streaming:
            self._streaming = False
            self._notices.region.let_go(self)
            self._answer.finish()

    def on_text(self, delta: str) -> None:
        if not self._streaming:
            self._streaming = True
            self._notices.region.hold(self)
        self._answer.feed(delta)

    def on_answer(self, turn: Turn) -> None:
        if turn.completion is not None and turn.completion.tool_calls:
            self._end_stream()  # its tools run next: their lines go below this text
        # else the stream ends at on_turn_end, once the turn is stored

    # -- the live region (tmg.ui.live_region.Live) ------------------------------------------

    def take_down(self) -> None:
        self._answer.take_down()

    def put_back(self) -> None:
        self._answer.put_back()

    def settle(self) -> None:
        self._end_stream()

    def on_turn_end(self, turn: Turn) -> None:
        self._end_stream()  # the held-back last of the answer, now that it is stored

    def on_interrupted(self, partial: str, turn: Turn) -> None:
        self._end_stream()
        self._notices.notice("answer interrupted")

    def on_tool(self, name: str, arguments: str, result: ToolResult) -> None:
        self._end_stream()
        args = one_line(arguments, 80)
        if result.is_error and result.content.startswith("refused:"):
            status = "refused"  # the permission engine's own line says why and what would allow it
        elif name == "shell" and result.content.startswith(("exit code:", "timed out")):
            status = result.content.split("\n", 1)[0] + _printed(result)
        else:
            status = "failed: " + one_line(result.content, 100) if result.is_error else _ok(result)
        self._notices.tool(f"{name} {args} {status}")

    def on_usage(self, usage: Usage, turn: Turn) -> None:
        pass  # one-shot output stays clean; the REPL shows usage after each answer

    def on_notice(self, message: str) -> None:
        self._end_stream()
        self._notices.notice(message)
