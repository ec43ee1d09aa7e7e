"""A reply against the answer before it: the answer's words, numbers and the name it gave the
assistant, and whether the reply corrects it (the third kind of teaching, beside judge.py's).

A correction contradicts ("no, ...", "it doesn't,", "X, not Y", "Orion not Atlas", "doesn't
exist", "the real one is ...") and bears on the previous answer: it opens a short reply and says
what is right (a number, code, a name), or shares words or a number with the answer, or points at
what the assistant said. Or, with no word of contradiction at all, it says the answer again with
another value in it: "Ursula K. Le Guin wrote it." to "Octavia Butler wrote it", "len(list)." to
"Use `list.length`", "that does fuck all. it's :q!". A short reply bears on the answer as a whole:
one clause may say what is wrong, another what is right. A change to the task ("actually, use a
dict instead"), a status report ("nope, still broken", "it works now") and the user's own
circumstances ("the dates are in dd/mm/yyyy in my file") are no corrections.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tmg.memory.teaching import cues, forms
from tmg.memory.teaching.phrases import FUNCTION_WORDS as _STOP, KINDS as _KINDS, MARKS, REVERSAL, Words, stem, unspaced_pairs

CORRECTION, INSTRUCTION, FACT = "correction", "instruction", "fact"  # what a clause teaches
CONTEXT_CHARS = 160  # the answer's sentence a correction is kept with, at most
_TOKEN = re.compile(rf"-{{1,2}}[\w-]+|[\w.]*\d[\w.]*|[^\W\d][\w{MARKS}]*(?:[./][\w]+)*")  # words in any script
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)?(?![\w])")



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
        self.stems = {stem(t) for t in self.tokens}
        self.folded = self.text.casefold()
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


# A reply that ends by taking its objection back ("... ah so 1.56 yes, sorry you right"): it corrects nothing.
_CONCEDES = re.compile(r"(?:\b(?:you|u)(?:'re|re| are| r|)\s+(?:were\s+|)(?:right|correct)|\bmy (?:bad|mistake)"
                       r"|\bnever ?mind|\bignore (?:that|me))\W*$")


def concedes(reply: str) -> bool:
    return bool(reply) and _CONCEDES.search(reply.lower()) is not None


def correction(body: str, words: Words, first: bool, said: str, answer: Answer, reply: str) -> Verdict | None:
    """`said`: the clause as typed; `reply`: the whole of a short reply ("" for a longer prompt)."""
    if concedes(reply):
        return None
    explicit = forms.ASSISTANT_WORDS.find(words) >= 0
    soft = forms.SOFT_LEAD.match_at(words, 0)
    lead = forms.CONTRA_LEAD.match_at(words, 0) or soft or forms.denial(words)
    if any(i + forms.NOT_CORRECTION.match_at(words, i) > lead for i in forms.NOT_CORRECTION.finditer(words)):
        return None  # (one inside the lead does not count: "I don't think that's right")
    rest = Words(" ".join(words[lead:])) if lead else words
    if not (answer.text or explicit):
        return _states_against(said, words, rest, lead)
    if rest and (cues.imperative(rest, anywhere=False) or proposes(rest)) and not explicit:
        return None  # "actually, use a dict instead", "let's do the login flow instead": this task
    shared = bears_on(reply or said, answer)
    numbers = {n.replace(",", ".") for n in _NUMBER.findall(said)}
    contradicts_number = bool(answer.numbers and numbers and not numbers <= answer.numbers
                              and forms.ASSERTS_NUMBER.search(body) and len(words) <= 8)
    if lead and first and answer.text and reply and (shared or has_content(reply) or (soft and len(reply.split()) <= 6)):
        return Verdict(CORRECTION, False, ("opens with a contradiction",))
    if (forms.contradiction(body, words) or _negates_answer(words, answer)) and (shared or explicit or (lead and first)):
        return Verdict(CORRECTION, False, ("contradicts the answer",))
    if contradicts_number and (shared or reply):
        return Verdict(CORRECTION, False, ("another number than the answer",))
    if reply and answer.text and not _own_circumstances(words) and _new_values(said, answer):
        says_instead = forms.COPULA_LEAD.match_at(rest, 0) > 0 and (shared or _points_at_answer(reply))
        if says_instead or (first and shared and len(words) <= 16):
            return Verdict(CORRECTION, False, ("says the answer again with another value",))
    if reply and first and answer.text and len(rest) <= 3 and _swaps_kind(rest, answer):
        return Verdict(CORRECTION, False, ("another of the answer's kind",))
    return None


def _swaps_kind(rest: Words, answer: Answer) -> bool:
    """A reply of a word or three that turns the answer round, or names another member of a kind
    the answer named one of, not offered as a choice ("metres or feet?")."""
    if REVERSAL.starts(rest):
        return True
    if answer.folded.rstrip().endswith("?"):
        return False  # a choice the answer asked for
    named = {t.strip(".,;:!?()") for t in answer.folded.replace("°", " °").split()}
    return any(word in kind and word not in named and (kind - {word}) & named for word in rest for kind in _KINDS)


# "..., not 0.1", "in Alberta not BC", "32 km, geen 23", "`-c`, ikke `-b`": a value said against
# another, in the languages the corpora correct in.
_VALUE_AGAINST = re.compile(
    r"(?:^|[\s,;(])(?:not|nicht|inte|ikke|geen|niet|mitte|bukan|não|nao|no|nie|pas|non)\s+(?:[`'\"«‘“]|\d|[A-Z]\w)")


def _states_against(said: str, words: Words, rest: Words, lead: int) -> Verdict | None:
    """With no answer before it (a session's first prompt): a correction only in a shape no task
    takes, a statement that sets a value against another ("ERA5 is 0.25 degrees, not 0.1",
    "Falsch, ... 3798 m hoch, nicht 3898"), opened by a contradiction or not about the user's own
    setup; an order ("use tabs, not spaces") is an instruction's business."""
    if not _VALUE_AGAINST.search(said) or cues.imperative(rest, anywhere=False):
        return None
    if not lead and _own_circumstances(words):
        return None  # "my server runs Ubuntu 22, not 20": context for the task
    return Verdict(CORRECTION, False, ("sets a value against another",))


def proposes(words: Words) -> bool:
    """"let's ...", "let us ...": what to do next in this task, said as a proposal."""
    return words[:1] in (["let's"], ["lets"]) or words[:2] == ["let", "us"]


def bears_on(text: str, answer: Answer) -> bool:
    """Whether `text` shares a content word with the answer, by stem ("stratify", "stratifies")."""
    return bool(answer.stems) and any(stem(t) in answer.stems for t in tokens(text))


def _negates_answer(words: Words, answer: Answer) -> bool:
    """"the launch was Orion not Atlas": a word of the answer under a contrastive "not"."""
    for index, word in enumerate(words[:-1]):
        if word == "not" and (index == 0 or words[index - 1] not in forms.AUXILIARIES) \
                and stem(words[index + 1]) in answer.stems:
            return True
    return False


_STATUS = frozenset("now works worked working fixed still again same fails failing failed breaks broke broken crashes"
                     " crashed happens".split())


def _own_circumstances(words: Words) -> bool:
    """The user's own setup or a change of state ("in my file", "we use ...", "it works now"):
    context for the task, not the answer said again."""
    hedge = forms.SOFT_LEAD.match_at(words, 0) or forms.HEDGE.find(words) >= 0
    own = any(w in ("my", "mine", "our", "ours", "we", "me") for w in words) or ("i" in words and not hedge)
    return own or bool(_STATUS & set(words))


def _points_at_answer(reply: str) -> bool:
    """A reply that opens on the answer ("that does nothing", "it's ...") or on what the
    assistant said."""
    first = Words(reply.lower()[:40])
    return bool(first) and first[0] in ("that", "that's", "this", "it", "it's", "its", "nope", "no")


_CODE_LIKE = re.compile(r"^(?:-{1,2}|:)\w|\w[=^()/_+#@~{}<>:\[\]]|\w\.\w|\w\(")
_HYPHENATED = re.compile(r"^[A-Za-z]+(?:-[A-Za-z]+)+$")
_SPANS = re.compile(r"`([^`]+)`|[\"“«'‘]\s?([^\"”»'’]{2,}?)\s?[\"”»'’]")


def _new_values(said: str, answer: Answer) -> bool:
    """Whether the clause holds a value the answer does not: a number, code, a quotation, a name."""
    for match in _SPANS.finditer(said):
        value = (match.group(1) or match.group(2) or "").strip().casefold()
        if value and value not in answer.folded:
            return True
    if {n.replace(",", ".") for n in _NUMBER.findall(said)} - answer.numbers:
        return True
    words = said.split()
    for index, raw in enumerate(words):
        word = raw.strip(",.;!?)\"'`«»“”")
        if not word or word.casefold() in answer.folded:
            continue
        if _CODE_LIKE.search(word) and not _HYPHENATED.match(word):
            return True
        capital = word[:1].isupper() and word not in ("I", "I'm", "I've", "I'd", "I'll")
        if capital and (index > 0 or words[index + 1:index + 2] and words[index + 1][:1].isupper()):
            return True  # a name: not the sentence's first word alone
    return False


def has_content(reply: str) -> bool:
    """A reply that says what is right instead: a number, a code span, an identifier, a name
    ("no its 6379", "It's `git restore --staged`", "the capital is Ottawa"), not "no, I don't think so"."""
    if _NUMBER.search(reply) or "`" in reply:
        return True
    words = reply.split()
    return any(re.search(r"[._/-]\w|\w[A-Z]", w) or (i > 0 and w[:1].isupper() and w.lower() != "i")
               for i, w in enumerate(words))


def renames_assistant(body: str, words: Words, answer: Answer, said: str) -> bool:
    """"You're not Zorblax": the name the previous answer gave the assistant, said back to it; or
    another name given it in its place ("you're Otto on this machine")."""
    its = _ITS_NAME.search(said)
    if its is not None and its.group(1).casefold() not in answer.self_names:
        return True  # "it's Quill, I literally just told you" to "I'm Nova"
    if forms.IDENTITY.find(words) < 0:
        return False
    if any(name in body for name in answer.self_names):
        return True
    given = _GIVEN_NAME.search(said)
    return given is not None and given.group(1).casefold() not in answer.self_names


_GIVEN_NAME = re.compile(r"^\W*(?i:you're|youre|you are|ur|u r)\s+(?!(?:I|OK|Ok|Right|Welcome|Wrong|Done|Not|So|Too|The|A|An"
                         r"|Very|Really|Just|Still|Always|Never|Correct|Fine|Great|Amazing)\b)([A-Z][\w-]+)")


_ITS_NAME = re.compile(r"^\W*(?i:(?:no|nope)\W+|)(?i:it's|its|it is)\s+([A-Z][a-z][\w-]*)\b(?![.\d])")


def tokens(text: str) -> set[str]:
    """Content tokens: identifiers, flags, numbers, words that are not function words, and the
    character pairs of an unspaced script."""
    out = set()
    for token in _TOKEN.findall(text):
        token = token.strip(".").casefold()
        if len(token) >= 2 and token not in _STOP and not token.isdigit() or any(c.isdigit() for c in token):
            if token:
                out.add(token)
    for part in re.findall(r"[a-z][a-z0-9_]{2,}", text.casefold()):
        if part not in _STOP:
            out.add(part)
    return out | unspaced_pairs(text)
