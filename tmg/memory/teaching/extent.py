"""Which clauses a teaching's statement holds: the clauses that carry it, and what they need
around them (an antecedent, a verbless tail, the rest of a memory request's sentence); all of a
short line that teaches and asks nothing."""

from __future__ import annotations

import re

from tmg.memory.teaching import cues, forms
from tmg.memory.teaching.correction import CORRECTION, FACT, Verdict
from tmg.memory.teaching.phrases import PUNCTUATION, Words
from tmg.memory.teaching.segment import Clause

_ANAPHOR = re.compile(r"\b(?:it|that|this|them|those|these|so|ça|cela|das|dies|eso|esto|lo|la)\b")


def groups(clauses: list[Clause], verdicts: list[Verdict | None], typed: str,
           short_reply: bool) -> list[list[int]]:
    """Runs of teaching clauses (adjacent, same paragraph), each with what it needs around it."""
    whole_line = clauses[0].paragraph == clauses[-1].paragraph and "?" not in typed \
        and not any(verdict is None and _task(clause) for clause, verdict in zip(clauses, verdicts)) \
        and not any(verdicts[i] is not None and verdicts[i - 1] is None and _turns_to(clauses[i - 1], clauses[i])
                    for i in range(1, len(clauses)))
    if short_reply and (whole_line or any(v is not None and v.kind == CORRECTION for v in verdicts)):
        # A short reply that corrects the answer, or a short line that teaches and asks nothing: all
        # of it (its reason, "thats how i read"; its tail, "every time."),
        whole = list(range(len(clauses)))
        while len(whole) > 1 and verdicts[whole[-1]] is None and forms.courtesy(Words(clauses[whole[-1]].masked)):
            whole.pop()  # but its closing courtesy ("I hope you don't mind me pointing it out!")
        while len(whole) > 1 and verdicts[whole[0]] is None and _courtesy(clauses[whole[0]]):
            whole.pop(0)  # and its opening greeting, thanks or praise ("Thanks, that was useful.")
        return [whole]
    runs: list[list[int]] = []
    for index, verdict in enumerate(verdicts):
        if verdict is None:
            continue
        if runs and runs[-1][-1] == index - 1 and clauses[index - 1].paragraph == clauses[index].paragraph:
            runs[-1].append(index)
        else:
            runs.append([index])
    for group in runs:
        first, last = group[0], group[-1]
        before = first - 1
        if before >= 0 and clauses[before].paragraph == clauses[first].paragraph and verdicts[before] is None \
                and not _courtesy(clauses[before]) and (_needs_antecedent(clauses[first], clauses[before], typed)
                     or (verdicts[first].kind == CORRECTION and _contradicts(clauses[before]))):
            group.insert(0, before)
        after = last + 1
        while after < len(clauses) and clauses[after].paragraph == clauses[last].paragraph \
                and verdicts[after] is None and (_fragment(clauses[after]) or _goes_on(clauses[last], clauses[after])
                                                 or _in_scope(verdicts[group[0]], clauses[group[0]], clauses[after])):
            group.append(after)
            after += 1
    return runs


def _courtesy(clause: Clause) -> bool:
    words = Words(clause.masked.rstrip(".!,"))
    return forms.courtesy(words) or forms.greeting(words)


def _contradicts(clause: Clause) -> bool:
    """A bare "no." or "ugh, nope." before a correction: it says the correction is one."""
    words = Words(clause.masked)
    return 0 < len(words) <= 3 and all(forms.CONTRA_LEAD.match_at(words, i) for i in range(len(words)))


def _needs_antecedent(clause: Clause, before: Clause, typed: str) -> bool:
    """A short clause that points back ("keep to that"), or one that shares a name with the
    clause before it ("Our design system is called Nimbus; refer to ... Nimbus names")."""
    words = clause.masked.split()
    if _ANAPHOR.search(clause.masked) and (len(words) <= 5 or forms.memory_request(Words(clause.masked))):
        return True  # "keep to that", "bear that in mind for scheduling"
    return bool(_names(typed[clause.start:clause.end]) & _names(typed[before.start:before.end]))


def _names(text: str) -> set[str]:
    """The names in a clause: capitalised words past its first, and code-like tokens."""
    out = set()
    for index, word in enumerate(text.split()):
        word = word.strip(PUNCTUATION + "'`")
        if len(word) >= 3 and ((index and word[:1].isupper()) or re.search(r"[._/\d]", word)):
            out.add(word.casefold())
    return out


def _goes_on(clause: Clause, after: Clause) -> bool:
    """The same sentence going on with another verb of the instruction ("stop using the em dash
    so much; use commas instead"), not with the next step of a task ("... — then give me a prep
    list")."""
    words = Words(after.masked)
    if forms.NEXT_STEP.match_at(words, 0) or not cues.imperative(words, anywhere=False):
        return False
    # or, right after a ban, a short sentence of what to do instead ("Don't ever suggest sudo pip. Use a venv.")
    return after.sentence == clause.sentence or (after.sentence == clause.sentence + 1 and len(words) <= 5
                                                 and cues.negative_imperative(Words(clause.masked)))


def _task(clause: Clause) -> bool:
    """A one-off ask beside a teaching, which is no part of it: "yo can u help me make a skyrim
    mod", "then give me a prep list" (a bare imperative may be the rule's own next sentence: "stop
    apologising. just answer.")."""
    words = Words(clause.masked)
    return forms.request_start(words) or (cues.imperative(words, anywhere=False) and forms.NEXT_STEP.match_at(words, 0) > 0) \
        or cues.makes_one(words) or _unmarked_question(clause)


_QUESTION_LEADS = frozenset("now anyway so ok okay and also btw oh".split())


def _unmarked_question(clause: Clause) -> bool:
    """A later sentence that asks with no "?" ("remember i work only in gold. now how much is a 3g
    ring"): the question the teaching was said beside, no part of it."""
    words = clause.masked.split()
    while words and words[0].strip(",") in _QUESTION_LEADS:
        words = words[1:]
    return clause.sentence > 0 and len(words) > 2 and forms.question_start(Words(" ".join(words)))


_TURN = frozenset("and also plus btw oh ps p.s. anyway".split())


def _turns_to(before: Clause, clause: Clause) -> bool:
    """A new sentence that opens "and ..." or "also ...": what it teaches is another matter than
    the sentence before ("write a ktor route. and use kotlinx.serialization, never jackson")."""
    words = clause.masked.split()
    return clause.sentence > before.sentence and bool(words) and words[0].strip(",:") in _TURN


def _in_scope(head: Verdict | None, clause: Clause, after: Clause) -> bool:
    """A memory request holds for the whole of its sentence ("Remember: the branch is cut on
    Tuesdays, and the freeze starts the Friday before")."""
    return head is not None and head.kind == FACT and after.sentence == clause.sentence


def _fragment(clause: Clause) -> bool:
    """A verbless tail that completes the clause before it ("Ever.", "One paragraph, max.")."""
    words = clause.masked.rstrip(".!").split()
    return 0 < len(words) <= 4 and not cues.imperative(Words(clause.masked)) and not clause.masked.endswith("?") \
        and not forms.courtesy(Words(clause.masked))  # "With warm regards, Hildegard" is no part of it
