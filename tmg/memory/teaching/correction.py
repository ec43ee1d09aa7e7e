"""A reply against the answer before it: the answer's words, numbers and the name it gave the
assistant, and whether the reply corrects it (the third kind of teaching, beside judge.py's).

A correction contradicts ("no, ...", "X, not Y", "doesn't exist", "the real one is ...") and
bears on the previous answer: it opens a short reply and says what is right (a number, code, a
name), or shares words or a number with the answer, or points at what the assistant said. A
change to the task ("actually, use a dict instead") and a status report ("nope, still broken")
are no corrections.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tmg.memory.teaching import cues, forms
from tmg.memory.teaching.phrases import Words

CORRECTION = "correction"
CONTEXT_CHARS = 160  # the answer's sentence a correction is kept with, at most
_TOKEN = re.compile(r"-{1,2}[\w-]+|[\w.]*\d[\w.]*|[A-Za-z_][\w]*(?:[./][\w]+)*")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)?(?![\w])")
_STOP = frozenset(
    "the a an and or but to of in on for with at by from is are was were be been it its it's this that these those"
    " you your i me my we our they them he she his her not no yes do does did don't can could would should will"
    " just also then than so as if when what which who how why there here have has had get got use using one all"
    " any every each more most some such only very really about into out up down over than thats that's".split())


class Verdict(NamedTuple):
    """What one clause teaches: its kind, whether it stands, and why."""

    kind: str
    standing: bool
    cues: tuple[str, ...]


class Answer:
    """What a correction is measured against: the previous answer's words, numbers, and the name
    it gave itself."""

    def __init__(self, text: str) -> None:
        self.text = text or ""
        self.tokens = tokens(self.text)
        self.numbers = {n.replace(",", ".") for n in _NUMBER.findall(self.text)}
        self.self_names = [m.group(1).casefold() for m in forms.SELF_NAME.finditer(self.text)]

    def sentence_about(self, words: set[str]) -> str:
        """The answer's sentence sharing most words with `words` (the first if none does)."""
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", self.text) if s.strip()]
        if not sentences:
            return ""
        best = max(sentences, key=lambda s: (len(tokens(s) & words), -sentences.index(s)))
        best = " ".join(best.split())
        return best if len(best) <= CONTEXT_CHARS else best[: CONTEXT_CHARS - 1].rstrip() + "…"


def correction(body: str, words: Words, first: bool, said: str, answer: Answer, reply: str) -> Verdict | None:
    explicit = forms.ASSISTANT_WORDS.find(words) >= 0
    soft = forms.SOFT_LEAD.match_at(words, 0)
    lead = forms.CONTRA_LEAD.match_at(words, 0) or soft
    if not (answer.text or explicit) or any(i + forms.NOT_CORRECTION.match_at(words, i) > lead
                                            for i in forms.NOT_CORRECTION.finditer(words)):
        return None  # (one inside the lead does not count: "I don't think that's right")
    rest = Words(" ".join(words[lead:])) if lead else words
    if rest and cues.imperative(rest, anywhere=False) and not explicit:
        return None  # "actually, use a dict instead": a change to this task, not a fact
    shared = tokens(said) & answer.tokens if answer.tokens else set()
    numbers = {n.replace(",", ".") for n in _NUMBER.findall(said)}
    contradicts_number = bool(answer.numbers and numbers and not numbers <= answer.numbers
                              and forms.ASSERTS_NUMBER.search(body) and len(words) <= 8)
    if lead and first and answer.text and reply and (shared or has_content(reply) or (soft and len(reply.split()) <= 6)):
        return Verdict(CORRECTION, False, ("opens with a contradiction",))
    if forms.contradiction(body, words) and (shared or explicit or (lead and first)):
        return Verdict(CORRECTION, False, ("contradicts the answer",))
    if contradicts_number and (shared or reply):
        return Verdict(CORRECTION, False, ("another number than the answer",))
    return None


def has_content(reply: str) -> bool:
    """A reply that says what is right instead: a number, a code span, an identifier, a name
    ("no its 6379", "It's `git restore --staged`", "the capital is Ottawa"), not "no, I don't think so"."""
    if _NUMBER.search(reply) or "`" in reply:
        return True
    words = reply.split()
    return any(re.search(r"[._/-]\w|\w[A-Z]", w) or (i > 0 and w[:1].isupper() and w.lower() != "i")
               for i, w in enumerate(words))


def renames_assistant(body: str, words: Words, answer: Answer) -> bool:
    """"You're not Zorblax": the name the previous answer gave the assistant, said back to it."""
    return forms.IDENTITY.find(words) >= 0 and any(name in body for name in answer.self_names)


def tokens(text: str) -> set[str]:
    """Content tokens: identifiers, flags, numbers, words that are not function words."""
    out = set()
    for token in _TOKEN.findall(text):
        token = token.strip(".").casefold()
        if len(token) >= 2 and token not in _STOP and not token.isdigit() or any(c.isdigit() for c in token):
            if token:
                out.add(token)
    for part in re.findall(r"[a-z][a-z0-9_]{2,}", text.casefold()):
        if part not in _STOP:
            out.add(part)
    return out
