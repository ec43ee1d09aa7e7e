"""The learned reading (tmg/memory/teaching/learned.py): what it keeps that no cue reads, what
its fences keep it from, and that the shipped weights are what the trainer makes of the corpora.
Phrasings of our own, none from the corpora (bench/data)."""

from __future__ import annotations

import json

import pytest

from bench.train_teaching import BLIND, CORPORA, train
from tmg.memory.teaching import find_teachings, might_teach
from tmg.memory.teaching import learned

ANSWER = "Run `npm install` in the project folder."


def kept(text: str, answer: str = "") -> list[tuple[str, str, bool, tuple[str, ...]]]:
    return [(t.kind, t.statement, t.standing, t.cues) for t in find_teachings(text, answer)]


@pytest.mark.parametrize("text", [
    "short replies, one paragraph max. thats all i have time for",  # a wish, its reason after it
    "code first, words after. thats how i skim",
    "I want every commit message you write for me in the imperative mood",  # a wish for every time
    "Rispondimi sempre in italiano da adesso.",  # languages the cues have no words for
    "Svara alltid på svenska, tack.",
    # the user's lasting situation first, then what to do because of it
    "I'm on a tiny laptop screen, so keep code lines under 80 characters",
])
def test_a_wish_no_cue_reads_is_kept_whole_in_the_users_words_and_pinned(text) -> None:
    assert kept(text) == [("instruction", text, True, ("learned",))]


@pytest.mark.parametrize("text", [
    "You never listen", "you always forget the imports",  # complaints: they ask for nothing
    "set npm to always save exact versions",  # the always is npm's, a task
    "for this email only, sign it as 'The Events Team'.",  # a one-off, whatever the model reads
    "keep going", "I want the code in Rust",  # a wish for this task only
])
def test_what_the_fences_keep_from_the_model(text) -> None:
    assert kept(text, ANSWER) == [] and kept(text) == []


def test_a_correction_the_model_reads_answers_an_answer_with_a_value() -> None:
    answer = "Het standaardwachtwoordbeleid vereist 8 tekens."
    assert kept("nee, minstens 12", answer) == [("correction", "nee, minstens 12", False, ("learned",))]
    assert kept("nee, minstens 12") == []  # no answer: nothing to correct
    assert kept("Thanks! Grace Hopper is great.", "Grace Hopper wrote the first compiler.") == []


def test_a_command_line_option_is_the_value_a_correction_gives() -> None:
    answer = "Run `git reset --hard HEAD~1` to undo the last commit."
    assert kept("--soft", answer) == [("correction", "--soft", False, ("learned",))]
    assert kept("--soft") == []


def test_the_gate_lets_through_a_language_it_has_no_words_for() -> None:
    assert might_teach("Svara alltid på svenska.", "")
    assert not might_teach("explain TCP vs UDP briefly", "")


def test_the_shipped_weights_are_what_the_trainer_makes_of_the_corpora_it_names() -> None:
    shipped = json.loads(learned.MODEL.read_text(encoding="utf-8"))
    assert shipped["outcomes"] == list(learned.OUTCOMES)
    assert not set(BLIND) & set(shipped["trained_on"]) and set(shipped["trained_on"]) <= set(CORPORA)
    assert train(shipped["trained_on"]) == shipped["weights"]  # bench/train_teaching.py, re-run
