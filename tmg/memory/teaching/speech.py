"""Someone else's words, reported: "my colleague says you should never ...", "the docs say ...",
"according to the wiki ...". What they said is no rule the user gave (forms.py reads the user's
own kinds of clause)."""

from __future__ import annotations

from tmg.memory.teaching.phrases import Phrases, Words

SPEECH = Phrases(
    "says", "said", "say", "told", "tells", "wrote", "writes", "insists", "insisted", "claims", "claimed", "thinks",
    "believes", "recommends", "recommended", "suggests", "suggested", "mentioned", "(wants|asked|asks|expects) (us|me)",
    "keeps saying", "posted", "replied", "swears", "swore", "reckons", "announced", "declared", "dit", "disait",
    "a dit", "écrit", "pense", "sagt", "sagte",
    "meint", "schreibt", "dice", "dijo", "escribió", "piensa", "saying", "insisting", "falou", "disse", "diz",
    "kehta", "kehti", "zegt", "zei", "säger", "sier", "siger", "mówi", "říká", "ha detto",
    # the same, said by others, or said before ("they say", "my father used to say")
    "dicono", "diceva", "dicevano", "dicen", "decía", "decian", "decían", "dizem", "dizia", "diziam", "disent", "disaient",
    "sagen", "meinte", "meinen", "zeggen", "mówią", "mówił", "mówiła", "říkají", "říkal", "říkala", "hovorí",
    "vraví", "каже", "кажуть", "казав", "казала", "говорит", "говорят", "говорил", "говорила", "сказал", "сказала",
    "λέει", "λένε", "diyor", "diyorlar", "söylüyor", "dibêje", "dibêjin", "digot", "يقول", "يقولون", "تقول", "بيقول",
    "بيقولوا", "كيقول", "كيقولو", "قال", "قالت", "אומר", "אומרת", "אומרים", "कहता", "कहती", "कहते", "کہتا", "کہتی",
    "کہتے", "berkata", "dizendo", "diciendo", "dicendo",
    "govori", "govorio", "govorila", "govorili", "kaže", "kaze", "rekao", "rekla", "kasema", "alisema", "anasema",
    "amesema", "husema")
REPORTED = Phrases("according to", "(i|we) (read|heard|saw) (that|somewhere|online|people|someone)",
                   "(i|we) (read|heard|saw) on (reddit|twitter|x|hn|hacker news|youtube|tiktok|a blog|a forum|the internet|the news)",
                   "apparently", "selon", "laut", "según", "segun")
_SPEAKERS_OWN = frozenset("i you u we ya je tu ich du yo i've i'm i'd i'll we've we're we'd you've you're".split())


def reported(words: Words) -> bool:
    """Someone else's words: "my colleague says you should never ...", "the docs say ...";
    not the user's own ("I told you already", "I've been meaning to say")."""
    if REPORTED.find(words) >= 0:
        return True
    for index in SPEECH.finditer(words):
        before = words[max(0, index - 3):index]
        if before and before[-1] not in _PREPOSITIONS and not _saying_is_done(words, index) \
                and not _own(before, words[index]) and _quotes_after(words, index):
            return True
    return False


def _own(before: list[str], verb: str) -> bool:
    """The user is the speaker ("I told you", "je disais"); "je" is only French "I" before a French
    verb ("Baka je uvijek govorila da ...": Croatian "has")."""
    own = _SPEAKERS_OWN & set(before)
    return bool(own - {"je"}) or ("je" in own and verb in _FRENCH_SPEECH)


_FRENCH_SPEECH = frozenset("dit disait disais a écrit pense".split())
# After these a speech verb is no verb: "talk to say", Dutch "in dit project" (French "il dit"),
# "in all claims you draft".
_PREPOSITIONS = frozenset("to in on at for of voor op van met aan bij uit the a an all these those my your our his"
                          " her their every each some any no".split())
# Opening a clause before a speech verb, these make the saying what the assistant is to do or
# stop doing: "stop saying 'great question'", "never say 'as an AI'", "please don't say ...".
_SAYING_IS_DONE = frozenset("stop quit avoid don't dont never always start cease".split())
_SOFTENERS = frozenset("please pls plz just also and so but then".split())


def _saying_is_done(words: Words, index: int) -> bool:
    verb = index - 1
    return words[verb] in _SAYING_IS_DONE and (verb in words.breaks or words[verb - 1] in _SOFTENERS)


_PRONOUN_OBJECTS = frozenset("it that this so them him her one".split())


def _quotes_after(words: Words, index: int) -> bool:
    """Whether a speech verb goes on to what was said: "Ben says you should never ...", not an
    attribution with nothing said after it ("..., our security team insists", "Le Guin wrote it")."""
    end = min([b for b in words.breaks if b > index] + [len(words)])
    after = words[index + SPEECH.match_at(words, index):end]
    if after[:1] in (["in"], ["about"], ["of"]) and "that" not in after:
        return False  # "nobody here thinks in celsius": a way of thinking, nothing said
    if not after and end < len(words):  # "Mein Chef meint, wir sollten ...": what was said follows the comma
        after = words[end:min([b for b in words.breaks if b > end] + [len(words)])]
    return bool(after) and not (len(after) == 1 and after[0] in _PRONOUN_OBJECTS)
