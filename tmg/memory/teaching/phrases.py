"""Phrases of words found in a clause's words: the scorer's cues, without regular expressions.

A cue list is hundreds of short phrases in four languages; as one regular expression each it took
tens of milliseconds to compile in every process that learned anything. As tuples of words in a
dict keyed by the first word it costs well under a millisecond to build and a few dict lookups
per word to search.

Spec syntax: words separated by spaces; `(a|b c|)` is one of the alternatives (each one or more
words, or nothing); `*` is any one word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

ANY = "*"
_ITEM = re.compile(r"\([^)]*\)|\S+")
# What a word is stripped of before it is compared: the punctuation around it.
PUNCTUATION = ",.;:!?()[]{}\"“”«»—–…"
# Contractions typed without their apostrophe ("doesnt", "thats", "youre"), read as written with
# it, so every cue knows one spelling. Only forms that are no other English word: not "its",
# "id", "ill", "were", "lets", "wed", "hell".
BARE_CONTRACTIONS = {bare: bare[:-1] + "'" + bare[-1] for bare in
                      "dont doesnt didnt isnt arent wasnt werent cant couldnt wouldnt shouldnt wont hasnt havent "
                      "hadnt aint mustnt neednt".split()}
BARE_CONTRACTIONS.update(
    {"thats": "that's", "whats": "what's", "theres": "there's",
     "youre": "you're", "im": "i'm", "ive": "i've", "youve": "you've", "youll": "you'll", "theyre": "they're",
     "hows": "how's", "wheres": "where's", "whos": "who's", "heres": "here's", "shes": "she's"})


class Words(list):
    """The words of a masked clause, stripped of the punctuation around them, and where a
    clause's own verb may stand: the first word, or one after a comma, semicolon or colon."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.breaks: set[int] = {0}
        for raw in text.split():
            word = raw.strip(PUNCTUATION)
            if word and word not in ("-", "'"):
                self.append(BARE_CONTRACTIONS.get(word, word))
            if raw[-1] in ",;:" and (word or raw in (",", ";", ":")):
                self.breaks.add(len(self))

# Words that say nothing of a topic: two texts sharing only these share no subject.
FUNCTION_WORDS = frozenset(
    "the a an and or but to of in on for with at by from is are was were be been it its it's this that these those"
    " you your i me my we our they them he she his her not no yes do does did don't can could would should will"
    " just also then than so as if when what which who how why there here have has had get got use using one all"
    " any every each more most some such only very really about into out up down over than thats that's".split())
# The function words of languages written without accents as often as not (Italian, Spanish,
# Portuguese, French, German, Dutch, the Nordic languages, Polish, Czech, Estonian, Indonesian and
# Malay, Tagalog, Swahili, Hindi typed in Latin letters): their clauses are not English.
OTHER_FUNCTION_WORDS = frozenset("""il la lo gli di che per non mi ti ci con del della sono poi sempre ora anche ogni
el los las que y por con es una mas pero siempre ahora
o os da do em um uma para com nao voce sempre agora
le les des et je tu pas est une avec pour sur
der die das und ich nicht ist zu mit ein eine auf du wir mir mich dir dich uns bitte immer auch noch nur wenn sie
dem einen einem einer zum zur vom oder aber
dans mais moi toi nous vous cette toujours sans
de het een en niet ik je van dat met voor wil houd altijd graag voortaan mij
jeg vil og ikke det er et til som har kan vi med af meg deg jag inte och att
nie jest sie mnie zawsze prosze tylko je se ze jak vzdy prosim
ja on ei ka palun alati
yang dan ini itu aku saya ya dong pakai tolong jangan guna kali untuk dengan tidak selalu nak tak
ang ng sa mo ko ba yung po lagi palagi ako naman
kwa ya wa ni
hai hain ho tha thi ka ki ke ko se mein mujhe mera meri hum hamara humara aap tum nahi nahin mat karo kya aur bhi
toh yaar bhai baar wala wali kuch""".split()) - FUNCTION_WORDS


# The vowel signs and other combining marks of scripts whose words carry them (Devanagari to
# Sinhala, Thai, Lao, Myanmar, Khmer; Hebrew and Arabic points; joiners): `\w` does not match
# them, so a tokenizer without them cuts "আমি" into "আম". The Indic dandas are left out.
MARKS = "\u0300-\u036f\u0591-\u05c7\u064b-\u065f\u0670\u0900-\u0963\u0966-\u0dff\u0e31-\u0e3a\u0e47-\u0e4e" \
    "\u0eb1-\u0ebc\u0ec8-\u0ecd\u102b-\u103e\u1056-\u1099\u17b4-\u17d3\u200c\u200d"

# Scripts written without spaces (kana, Han, Thai, Lao, Burmese, Khmer): a run of them is one
# "word", so what it shares with another text is counted by its character pairs.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]{2,}")


def unspaced_pairs(text: str) -> set[str]:
    """The character pairs of each run of an unspaced script in `text` ("大红袍属于绿茶": 大红, 红袍, ...)."""
    return {run[i:i + 2] for run in _UNSPACED.findall(text) for i in range(len(run) - 1)}


def stem(word: str) -> str:
    """A word without its inflection, near enough to match "stratify" with "stratifies"."""
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


Slot = frozenset  # the words one position of a phrase accepts; empty: any word


def _expand(spec: str) -> list[tuple[Slot, ...]]:
    """The phrase's variants as slots: a group of one-word alternatives is one slot; a group
    with an empty or a many-word alternative is expanded (so a spec stays a handful of variants
    however many words its slots accept)."""
    variants: list[tuple[Slot, ...]] = [()]
    for item in _ITEM.findall(spec):
        alternatives = [alt.split() for alt in item[1:-1].split("|")] if item.startswith("(") else [[item]]
        if all(len(alt) == 1 for alt in alternatives):
            slot = Slot() if alternatives == [[ANY]] else Slot(alt[0] for alt in alternatives)
            variants = [v + (slot,) for v in variants]
        else:
            variants = [v + tuple(Slot() if w == ANY else Slot((w,)) for w in alt)
                        for v in variants for alt in alternatives]
    return variants


class Phrases:
    """A set of phrases, searched for in a list of words."""

    def __init__(self, *specs: str) -> None:
        self._by_first: dict[str, list[tuple[Slot, ...]]] = {}
        self._wild: list[tuple[Slot, ...]] = []  # phrases that start with `*`
        for spec in specs:
            for phrase in _expand(spec):
                if not phrase:
                    continue
                if not phrase[0]:
                    self._wild.append(phrase)
                for first in phrase[0]:
                    self._by_first.setdefault(first, []).append(phrase)
        for phrases in self._by_first.values():
            phrases.sort(key=len, reverse=True)  # the longest first: "no more" before "no"

    def match_at(self, words: Sequence[str], index: int) -> int:
        """The length of the longest phrase starting at `words[index]`, or 0."""
        size = len(words)
        if index >= size:
            return 0
        for phrases in (self._by_first.get(words[index]), self._wild):
            for phrase in phrases or ():
                length = len(phrase)
                if index + length > size:
                    continue
                for offset in range(1, length):  # a plain loop: this is the scorer's inner loop
                    slot = phrase[offset]
                    if slot and words[index + offset] not in slot:
                        break
                else:
                    return length
        return 0

    def find(self, words: Sequence[str], start: int = 0) -> int:
        """The index of the first phrase at or after `start`, or -1."""
        return next(self.finditer(words, start), -1)

    def finditer(self, words: Sequence[str], start: int = 0) -> Iterator[int]:
        for index in range(start, len(words)):
            if self.match_at(words, index):
                yield index

    def __contains__(self, words: Sequence[str]) -> bool:
        return self.find(words) >= 0

    def starts(self, words: Sequence[str]) -> bool:
        return self.match_at(words, 0) > 0

    def firsts(self) -> frozenset[str]:
        """The words a phrase can start with."""
        return frozenset(self._by_first)


# Closed kinds a terse reply swaps one member of for another ("feet" to "metres", "Wednesday" to
# "Tuesday"), and the words that turn an answer round (correction.py); the word gate lets a reply
# of a word or three with one of their words through.
KINDS = tuple(frozenset(kind.split()) for kind in (
    "monday tuesday wednesday thursday friday saturday sunday",
    "january february april june july august september october november december",
    "feet foot ft inches inch metres meters metre meter cm mm km kilometres kilometers miles mi yards",
    "celsius fahrenheit °c °f kelvin",
    "kg kilos kilograms grams lb lbs pounds oz ounces stone",
    "litres liters ml millilitres gallons cups pints",
    "mph kph km/h"))
REVERSAL = Phrases("(the|) other way (round|around|rund)", "backwards", "backward", "(the|) other one", "(the|) opposite",
                   "reversed", "vice versa", "andersom", "al (revés|reves)", "umgekehrt", "omvendt", "(tvärtom|tvartom)",
                   "den (anden|andra)", "à l'envers")
SWAP_WORDS = frozenset().union(*KINDS) | (REVERSAL.firsts() - FUNCTION_WORDS)
