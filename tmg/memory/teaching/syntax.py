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

