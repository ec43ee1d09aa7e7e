"""An answer's heading in the transcript: the time and the model; a prompt's every answer was
"(turn 1)" (turns count model calls per prompt), so only answers after tool results are marked."""

from __future__ import annotations

import re

from tmg.session.transcript import Transcript


def test_an_answer_is_headed_by_time_and_model_and_one_after_tools_says_so(tmp_path):
    transcript = Transcript(tmp_path / "t.md", "s1", "default")
    transcript.prompt("read it")
    transcript.answer("Let me look.", "openai/gpt-4.1", 1)
    transcript.tool_call("read_file", '{"path": "a"}', "ok")
    transcript.answer("It says hi.", "openai/gpt-4.1", 2)
    transcript.interrupted("And th", "openai/gpt-4.1", 1)
    transcript.close()
    headings = re.findall(r"^### \d\d:\d\d:\d\d · (.*)$", (tmp_path / "t.md").read_text(), re.M)
    assert headings == ["openai/gpt-4.1", "openai/gpt-4.1 (after tool results)", "openai/gpt-4.1 [interrupted]"]
