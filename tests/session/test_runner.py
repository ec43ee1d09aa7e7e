"""TranscriptRecorder: what the engine did, as the transcript shows it."""

from __future__ import annotations

from tmg.engine.turn import Turn
from tmg.llm.gateway import Completion, Usage
from tmg.session.runner import TranscriptRecorder
from tmg.session.transcript import Transcript


def turn(prompt_id: int, index: int, text: str, ids: list[str] | None = None) -> Turn:
    t = Turn(prompt_id, index, "q", "s-1", "default", model="m", completion=Completion(text, [], Usage()))
    if ids is not None:
        t.meta["memory_ids"] = ids
    return t


def test_the_recalled_ids_are_written_once_per_prompt_before_its_answer(tmp_path):
    transcript = Transcript(tmp_path / "t.md", "s-1", "default")
    recorder = TranscriptRecorder(transcript)
    recorder.on_answer(turn(1, 1, "", ["ENG-2026-01-01-001", "ENG-2026-01-01-002"]))  # a tool call turn
    recorder.on_answer(turn(1, 2, "the answer", ["ENG-2026-01-01-001", "ENG-2026-01-01-002"]))
    recorder.on_answer(turn(2, 1, "no recall this time", []))
    recorder.on_answer(turn(3, 1, "again", ["ENG-2026-01-01-003"]))
    transcript.close()
    text = (tmp_path / "t.md").read_text()
    assert text.count("> memory: recalled ENG-2026-01-01-001, ENG-2026-01-01-002") == 1
    assert text.index("memory: recalled ENG-2026-01-01-001") < text.index("the answer")
    assert text.count("> memory: recalled ENG-2026-01-01-003") == 1 and text.count("memory: recalled") == 2


def test_a_summary_is_marked_in_the_transcript_with_what_it_replaces_and_secrets_masked(tmp_path):
    transcript = Transcript(tmp_path / "t.md", "s-1", "default", redact=lambda s: s.replace("sk-secret", "***"))
    recorder = TranscriptRecorder(transcript)
    transcript.prompt("first question")
    recorder.on_summary({"role": "summary", "content": "## Goal and current task\nuse key sk-secret\n\nmore",
                         "meta": {"summary": {"messages": 12, "model": "m", "focus": "the plan"}}})
    transcript.close()
    text = (tmp_path / "t.md").read_text()
    assert "first question" in text
    assert "summary of the 12 earlier messages above (written by m, focus: the plan" in text
    assert "> ## Goal and current task\n> use key ***\n>\n> more" in text and "sk-secret" not in text
