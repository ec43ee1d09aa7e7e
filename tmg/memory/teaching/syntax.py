"""Where the clauses of a sentence typed without punctuation begin (dictated, lower-case, typed
fast), so the cues read them as if the commas were there.

"every time you give me a command can you put it on its own line" and "when you write me emails
don't sign them with my full name" are a subordinate clause and a main one with no comma between:
the main clause starts where a request, a negated, adverbial or plain imperative, or "please"
begins after the subordinate clause's own verb.
"""

from __future__ import annotations

from tmg.memory.teaching import cues, forms
from tmg.memory.teaching.phrases import Phrases, Words

_MAIN_OPENERS = Phrases("please", "pls", "plz", "kindly", "always", "never", "just", "(don't|do not)")
_SUBORDINATE = Phrases("(when|whenever|if|every time|everytime|each time|any time|anytime|next time|once) "
                       "(i|you|u|we|it|there|my|the)")


def close_subordinate(words: Words) -> None:
    """Add the missing break between a leading subordinate clause and its main clause."""
    opener = _SUBORDINATE.match_at(words, 0)
    if not opener:
        return
    for index in range(opener + 1, len(words)):
        if index in words.breaks:
            return  # punctuated: the comma is there
        if forms.REQUEST.match_at(words, index) or _MAIN_OPENERS.match_at(words, index) or _main_verb(words, index):
            words.breaks.add(index)
            return


_NOT_BEFORE_IMPERATIVE = frozenset("""
to i you u we they he she it who that which can could will would should must may might do does did don't
say says said mean means call calls type write word term
""".split())


def _main_verb(words: Words, index: int) -> bool:
    """An imperative that starts the main clause ("whenever you write sql for me use uppercase"):
    not an infinitive ("ask you to explain"), a verb with its subject, or a word mentioned ("when
    i say deploy")."""
    return cues.is_verb(words[index]) and words[index - 1] not in _NOT_BEFORE_IMPERATIVE



# Words of the closed classes, which an imperative never is: pronouns, determiners, prepositions,
# conjunctions, auxiliaries, question words, common adverbs (the verb is the open class).
_CLOSED = frozenset("""
i you u we they he she it me us them him her my your our their his its this that these those there here
a an the some any every each all no none both either neither another other such what which who whom whose
when where why how whether if then than so and or but nor yet because though although while until unless
to of in on at by for with from into onto about over under after before since during without within through
is are was were be been being am do does did done have has had can could will would shall should may might must
i'm you're we're they're it's that's there's i'll you'll i've i'd don't doesn't didn't isn't aren't won't can't
not never always often sometimes usually also just only even still again already very really quite too more
most less least much many few lot lots something anything everything nothing someone anyone everyone nobody
one two three first next last new old same own ‹q› ‹c›
""".split())
_OBJECTS = frozenset("me it them us him her the a an my your this that".split())


def opened_imperative(words: Words) -> bool:
    """An imperative by its place, whatever its verb: right after a scope of time or a conditional
    clause that opens the sentence ("next time just fix typos ...", "whenever I ask for an
    explanation, pitch it at their level") only an imperative can stand."""
    # (a bare "always" or "never" also opens a declarative with its subject left out: "never
    # thought of that", "always helpful")
    strong, weak = cues.STRONG_TIME.match_at(words, 0), cues.WEAK_TIME.match_at(words, 0)
    starts = [n for n in (strong, weak if weak > 1 else 0) if n]
    if cues.CONDITIONAL.starts(words) and len(words.breaks) > 1:
        starts.append(min(b for b in words.breaks if b > 0))
    for at in starts:
        while at < len(words) and words[at] in ("just", "please", "pls", "kindly", "simply", "also", "then"):
            at += 1
        if at < len(words) and _open_verb(words, at):
            return True
    return False


def _open_verb(words: Words, at: int) -> bool:
    word = words[at]
    if word in _CLOSED or not word.replace("-", "").isalpha() or len(word) < 2 or word.endswith(("ed", "ing")):
        return False
    if word.endswith("s") and not word.endswith(("ss", "us")):
        return False  # "tests fail", "asks": a subject or a verb with its own
    after = words[at + 1:at + 3]
    # "slack pings me": the word is a subject when a verb with its object follows
    return not (len(after) == 2 and after[0].endswith("s") and after[1] in _OBJECTS)
