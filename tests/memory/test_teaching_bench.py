"""The bench's rule for when a written statement counts as a label (bench/memory_teaching.py):
the rule the figures in docs/memory-quality.md are counted by."""

from __future__ import annotations

from bench.memory_teaching import held_together, matches


def test_one_sentence_holding_two_labels_counts_for_both() -> None:
    labels = ["I coach under-12 rugby in Cork", "keep drills to ten minutes each"]
    statement = "I coach under-12 rugby in Cork and the kids lose focus, so keep drills to ten minutes each"
    assert not any(matches(label, statement) for label in labels)  # neither alone
    assert held_together(labels, statement) == [0, 1]


def test_a_statement_that_holds_much_more_than_its_labels_counts_for_none() -> None:
    labels = ["I coach under-12 rugby", "keep drills short"]
    statement = ("I coach under-12 rugby. Write me a full season plan with weekly themes, match days, travel, kit lists, "
                 "parent rotas, first aid and fundraising. keep drills short")
    assert held_together(labels, statement) == []
    assert held_together(labels[:1], "I coach under-12 rugby on Saturdays") == []  # one label: `matches` judges it
