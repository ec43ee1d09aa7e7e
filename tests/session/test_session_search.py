"""`tmg sessions --search`: every word, any case, user and assistant messages, newest first, bounded."""

from __future__ import annotations

import json

from tmg.session.search import search, snippet
from tmg.session.store import SessionStore


def session(store, project, *messages):
    ref = store.start_new("default", project)
    ref.history_path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return ref


def test_every_word_in_one_message_any_case(tmp_path):
    store = SessionStore(tmp_path)
    ref = session(store, tmp_path, {"role": "user", "content": "The Lighthouse keeper", "ts": 1},
                  {"role": "assistant", "content": "a lighthouse, no keeper", "ts": 2},
                  {"role": "tool", "content": "lighthouse keeper (tool output)"},
                  {"role": "user", "content": [{"type": "text", "text": "keeper of the LIGHTHOUSE"}]})
    found = search([ref], ["lighthouse", "KEEPER"])
    assert [(h.role, h.snippet) for h in found.hits] == [
        ("user", "keeper of the LIGHTHOUSE"), ("assistant", "a lighthouse, no keeper"),
        ("user", "The Lighthouse keeper")]  # newest first; a tool's output is not a message of the chat
    assert search([ref], ["lighthouse", "zebra"]).hits == []


def test_bounded_in_hits_and_in_bytes(tmp_path):
    store = SessionStore(tmp_path)
    refs = [session(store, tmp_path, *({"role": "user", "content": f"needle {i}"} for i in range(30)))
            for _ in range(3)]
    found = search(refs, ["needle"], max_hits=20)
    assert len(found.hits) == 20 and found.cut and found.sessions_left == 2
    small = search(refs, ["needle"], max_hits=100, max_bytes=300)
    assert small.sessions_read == 1 and small.sessions_left == 2 and 0 < len(small.hits) < 30


def test_a_snippet_is_one_line_around_the_word():
    text = "x " * 200 + "the needle\nis here " + "y " * 200
    piece = snippet(text, text.index("needle"), width=60)
    assert "needle is here" in piece and piece.startswith("…") and piece.endswith("…") and "\n" not in piece
