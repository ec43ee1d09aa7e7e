"""One owner of the terminal while an answer streams: notices, tool lines and questions never
land inside the answer's live tail, and every line is shown once (stdout and stderr on one
terminal, as in the REPL)."""

from __future__ import annotations

from rich.console import Console

from tests.support.vt import VirtualTerminal
from tmg.engine.turn import Turn
from tmg.llm.gateway import Completion, ToolCallRequest, Usage
from tmg.tools.registry import ToolResult
from tmg.ui.console_events import ConsoleEvents
from tmg.ui.markdown_stream import MarkdownStream
from tmg.ui.notices import Notices


def _rig(term: VirtualTerminal) -> tuple[ConsoleEvents, Notices]:
    console = Console(file=term, width=term.width, height=term.height, force_terminal=True, force_interactive=True,
                      color_system=None)
    notices = Notices(term)
    return ConsoleEvents(MarkdownStream(console, min_interval=0, max_interval=0), notices), notices


def _say(events: ConsoleEvents, text: str) -> None:
    for start in range(0, len(text), 3):
        events.on_text(text[start:start + 3])


def _turn(text: str, *calls: ToolCallRequest) -> Turn:
    turn = Turn(1, 1, "q", "s", "default")
    turn.completion = Completion(text, list(calls), Usage())
    return turn


def test_a_notice_while_the_answer_streams_is_printed_above_it_and_nothing_is_shown_twice():
    term = VirtualTerminal(60, 20)
    events, notices = _rig(term)
    _say(events, "The first paragraph of the answer.\n\nThe second")
    notices.warn("MCP server files stopped; its tools are off")  # said by a background task
    _say(events, " paragraph, which goes on.")
    turn = _turn("")
    events.on_answer(turn)
    events.on_turn_end(turn)
    assert term.lines() == ["tmg: warning: MCP server files stopped; its tools are off",
                            "The first paragraph of the answer.", "", "The second paragraph, which goes on."]


def test_text_before_a_tool_call_is_final_before_the_tool_line_and_the_next_answer_follows():
    term = VirtualTerminal(60, 20)
    events, _notices = _rig(term)
    _say(events, "Let me look at the file.")
    first = _turn("Let me look at the file.", ToolCallRequest("c1", "read_file", '{"path": "a.txt"}'))
    events.on_answer(first)
    events.on_tool("read_file", '{"path": "a.txt"}', ToolResult("hello"))
    events.on_turn_end(first)
    _say(events, "The file says hello.")
    second = _turn("The file says hello.")
    events.on_answer(second)
    events.on_turn_end(second)
    assert term.lines() == ["Let me look at the file.", '  · read_file {"path": "a.txt"} ok',
                            "The file says hello."]


def test_a_question_settles_the_answer_first():
    """What the consent prompt calls before it asks: the answer so far becomes final, the
    question goes below it, and text after the answer is a new piece below the question."""
    term = VirtualTerminal(60, 20)
    events, notices = _rig(term)
    _say(events, "I will run a command.")
    notices.region.settle()
    term.write("tmg asks: shell wants to run\n")
    _say(events, "It ran.")
    turn = _turn("")
    events.on_answer(turn)
    events.on_turn_end(turn)
    assert term.lines() == ["I will run a command.", "tmg asks: shell wants to run", "It ran."]
