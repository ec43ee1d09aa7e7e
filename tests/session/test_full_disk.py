"""A full disk (ENOSPC injected at the write): the history is left as it was and loads, the user is
told in one line what was not stored, and the transcript's failure never ends a turn."""

from __future__ import annotations

import errno

import pytest

from tests.doubles.model import FakeModel, text
from tests.engine.test_engine import make_engine
from tmg.session.history import History, HistoryWriteError
from tmg.session.transcript import Transcript


class FillsUp:
    """A file that takes ``room`` more bytes, then fails as a full disk does (a short write first)."""

    def __init__(self, real, room: int) -> None:
        self.real, self.room = real, room

    def write(self, data: bytes) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        written = self.real.write(data[: self.room])
        self.room -= written
        return written

    def fileno(self) -> int:
        return self.real.fileno()

    def close(self) -> None:
        self.real.close()


def test_a_record_that_does_not_fit_is_cut_back_and_said(tmp_path):
    path = tmp_path / "history.jsonl"
    h = History(path)
    h.append({"role": "user", "content": "kept"})
    before = path.read_bytes()
    h._file = FillsUp(h._file, room=10)  # ten bytes of the answer land, then the disk is full
    with pytest.raises(HistoryWriteError) as raised:
        h.append({"role": "assistant", "content": "x" * 500})
    assert str(raised.value).startswith("the answer above was NOT stored in the session's history (No space left "
                                        f"on device, writing {path}); free some disk space")
    assert path.read_bytes() == before  # the ten bytes were cut again
    assert [m["content"] for m in h.messages] == ["kept"]
    warnings: list[str] = []
    assert [m["content"] for m in History(path, warn=warnings.append).messages] == ["kept"] and warnings == []
    h._file = FillsUp(h._file.real, room=10_000)  # room again: the next record follows on a line of its own
    h.append({"role": "assistant", "content": "later"})
    assert [m["content"] for m in History(path).messages] == ["kept", "later"]


def test_a_prompt_that_cannot_be_stored_is_not_sent(tmp_path):
    h = History(tmp_path / "history.jsonl")
    h.append({"role": "user", "content": "first"})
    h._file = FillsUp(h._file, room=0)
    with pytest.raises(HistoryWriteError, match=r"^your prompt was not sent: it could not be stored \(No space"):
        h.append({"role": "user", "content": "second"})


async def test_an_answer_the_disk_cannot_take_ends_the_turn_with_one_plain_error(tmp_path):
    model = FakeModel(text("a long answer " * 40))
    engine, events, _ = make_engine(tmp_path, model)
    engine.history.append({"role": "user", "content": "warm up"})  # opens the file
    engine.history.append({"role": "assistant", "content": "ok"})
    engine.history._file = FillsUp(engine.history._file, room=120)  # the prompt fits, the answer does not
    with pytest.raises(HistoryWriteError, match="the answer above was NOT stored"):
        await engine.run_prompt("tell me a lot")
    assert "".join(events.deltas) == "a long answer " * 40  # it was shown: the error says it was not kept
    stored = History(tmp_path / "history.jsonl").messages
    assert [m["content"] for m in stored] == ["warm up", "ok", "tell me a lot"]
    assert stored[-1]["meta"]["failed"]  # set aside: the next prompt is not sent after an unanswered one


def test_the_transcript_misses_blocks_on_a_full_disk_and_says_so_once(tmp_path):
    warnings: list[str] = []
    transcript = Transcript(tmp_path / "t.md", "s-1", "default", warn=warnings.append)
    real = transcript._file
    transcript._file = FillsUp(real, room=0)
    transcript.prompt("lost one")
    transcript.answer("lost two", "m", 1)
    assert len(warnings) == 1 and warnings[0].startswith(f"the transcript {tmp_path / 't.md'} could not be written "
                                                         "(No space left on device)")
    transcript._file = real
    transcript.prompt("kept")
    transcript._file = FillsUp(real, room=0)
    transcript.error("lost three")
    transcript.close()
    assert len(warnings) == 2  # room came back in between: a new failure is said again
    text_now = (tmp_path / "t.md").read_text()
    assert "kept" in text_now and "lost" not in text_now
