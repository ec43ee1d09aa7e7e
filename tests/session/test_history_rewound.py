"""A rewind marker: the file only grows, the taken-back messages stay on record and leave what the
model is sent, in the process that wrote it and in every later load."""

from __future__ import annotations

from tmg.session.history import History, is_rewind


def exchange(history: History, n: int, ts: float) -> int:
    """A prompt and its answer; returns the user message's index."""
    at = len(history.messages)
    history.append({"role": "user", "content": f"prompt {n}", "ts": ts})
    history.append({"role": "assistant", "content": f"answer {n}", "ts": ts + 0.5})
    return at


def contents(history: History) -> list[str]:
    return [m["content"] for m in history.model_view]


def test_a_rewind_takes_the_last_exchanges_out_of_the_view_and_keeps_the_file_growing(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    exchange(history, 1, 100.0)
    second = exchange(history, 2, 200.0)
    exchange(history, 3, 300.0)
    before = path.read_bytes()
    history.add_rewound(second, {"prompts": 2})
    assert path.read_bytes().startswith(before)  # appended, never rewritten
    assert contents(history) == ["prompt 1", "answer 1"]
    history.append({"role": "user", "content": "prompt 4", "ts": 400.0})
    assert contents(history) == ["prompt 1", "answer 1", "prompt 4"]

    again = History(path)
    assert contents(again) == ["prompt 1", "answer 1", "prompt 4"]
    assert [m["content"] for m in again.messages if not is_rewind(m)] == [
        "prompt 1", "answer 1", "prompt 2", "answer 2", "prompt 3", "answer 3", "prompt 4"]
    assert [again.is_rewound(i) for i in range(len(again.messages))] == [
        False, False, True, True, True, True, False, False]
    assert again.last_turn_message()["content"] == "prompt 4"


def test_a_summary_made_in_a_rewound_prompt_is_taken_back_with_it(tmp_path):
    history = History(tmp_path / "history.jsonl")
    exchange(history, 1, 100.0)
    exchange(history, 2, 200.0)
    third = exchange(history, 3, 300.0)
    history.add_summary("what 1 and 2 said", history.model_view[4], {"messages": 4})
    assert contents(history)[0].endswith("what 1 and 2 said")
    history.add_rewound(third, {"prompts": 1})
    assert contents(history) == ["prompt 1", "answer 1", "prompt 2", "answer 2"]
    assert contents(History(tmp_path / "history.jsonl")) == ["prompt 1", "answer 1", "prompt 2", "answer 2"]


def test_a_marker_whose_index_moved_finds_its_message_by_time(tmp_path):
    history = History(tmp_path / "history.jsonl")
    exchange(history, 1, 100.0)
    exchange(history, 2, 200.0)
    history.append({"role": "rewound", "content": "", "meta": {"rewound": {"from": 0, "from_ts": 200.0}}})
    assert contents(history) == ["prompt 1", "answer 1"]
