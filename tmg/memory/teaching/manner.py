"""What a standing instruction applies to and how (cues.py has the other cues): a scope of
application ("in every answer", "any code you write for me") and a manner every answer keeps
("be concise", "answer in German", "explain things step by step", "fewer big words").

A manner or a scope holds for more than this task only when nothing definite narrows it: "explain
things step by step" stands, "explain this error step by step" is the task at hand.
"""

from __future__ import annotations

from tmg.memory.teaching.phrases import Phrases, Words

# What an instruction applies to: every answer, any code, everything written for the user.
_OUTPUTS = frozenset("""
answer answers reply replies response responses example examples snippet snippets code script scripts command
commands query queries sql email emails message messages explanation explanations suggestion suggestions output
outputs summary summaries comment comments docs documentation plot plots chart charts diagram diagrams pr prs test
tests function functions component components project projects chat chats conversation conversations numbers
""".split())
_LANGUAGES_CODE = frozenset("react python javascript typescript shell bash go rust java yaml json markdown".split())
_GENERIC_DETERMINERS = frozenset("all any every each your my future".split())
_GENERIC_PREPOSITIONS = frozenset("in for with to of on across".split())
_NOT_MODIFIERS = frozenset("the this that a an".split())
GENERIC_WRITING = Phrases(
    "(everything|anything|whatever|all|code|snippets|snippet|scripts|script|emails|email) (you|u) "
    "(write|give|send|draft|generate|produce|suggest|show)", "my answers", "commit messages")
# "... you write for me" is a scope after what it qualifies ("the SQL you write for me"), a
# request's own verb after a modal ("can you write me a script?").
_WRITTEN_FOR = Phrases("(you|u) (write|give|send|draft|generate|produce|suggest|show) (me|for)")
_ASKING = frozenset("can could would will do did please".split())


def generic(words: Words) -> bool:
    """A scope of application: "in every answer", "in shell examples", "any React code", "the
    code you write for me"."""
    for index, word in enumerate(words):
        if word in _GENERIC_PREPOSITIONS:
            at = index + 1
            determined = False
            while at < len(words) and words[at] in _GENERIC_DETERMINERS:
                at, determined = at + 1, True
            if at < len(words) and (words[at] in _OUTPUTS or (determined and words[at] in _LANGUAGES_CODE)):
                return True
            if at + 1 < len(words) and words[at] not in _NOT_MODIFIERS and words[at + 1] in _OUTPUTS:
                return True
        elif word in ("every", "each", "any", "all"):
            if any(w in _OUTPUTS or w in ("files", "commits", "file") for w in words[index + 1:index + 3]):
                return True
    quantifier = next((i for i, w in enumerate(words) if w in ("every", "each", "any", "all", "anything", "everything")), -1)
    if quantifier >= 0 and any(words[i:i + 2] in ([u, v] for u in ("you", "u") for v in _WRITE_VERBS)
                               for i in range(quantifier + 1, len(words))):
        return True  # "every mockup description you write", "anything you draft"
    if any(index == 0 or words[index - 1] not in _ASKING for index in _WRITTEN_FOR.finditer(words)):
        return True
    return GENERIC_WRITING.find(words) >= 0


_WRITE_VERBS = frozenset("write give send draft generate produce suggest show make create do".split())


# Style that holds for every answer: "be concise", "answer in German".
_LANGUAGES = frozenset("""
english british american french german spanish italian portuguese dutch polish russian ukrainian chinese mandarin
japanese korean arabic hindi turkish swedish norwegian danish finnish greek hebrew czech français francais anglais
allemand espagnol deutsch englisch französisch spanisch español espanol inglés ingles francés frances alemán aleman
""".split())
_STYLE_VERBS = frozenset("answer reply respond speak talk answers replies responses réponds antworte responde".split())
_STYLE_TO = frozenset("to me moi mir write".split())
BE_STYLE = Phrases(
    "be (more|less|very|extra|a bit more|) (concise|brief|terse|short|formal|informal|casual|direct|blunt|honest"
    "|precise|specific|polite|friendly|patient|careful|succinct|detailed)")


def style(words: Words) -> bool:
    """A manner every answer keeps: "be concise", "answer in German", "write to me in French",
    "explain things step by step"."""
    if BE_STYLE.find(words) >= 0:
        return True
    for index, word in enumerate(words):
        if word in _STYLE_VERBS or (word == "write" and words[index + 1:index + 3] == ["to", "me"]):
            at = index + 1
            while at < len(words) and words[at] in _STYLE_TO:
                at += 1
            if words[at:at + 1] in (["in"], ["en"], ["auf"]) and words[at + 1:at + 2] \
                    and words[at + 1] in _LANGUAGES:
                return True
    return manner(words)


# How every answer is said: a closed class of manner adverbials and comparatives of wording.
MANNER = Phrases(
    "step by step", "in (simple|plain|layman's|laymans|everyday|basic|easy|simpler|plainer|non-technical) "
    "(terms|words|language|english)", "like (i'm|i am) (a|an|) (five|5|ten|new|beginner|newbie|child|kid|novice)",
    "(fewer|less) (big|long|technical|fancy|complicated|difficult|) (words|jargon|acronyms|terms|abbreviations)",
    "(simpler|shorter|plainer|easier) (words|sentences|language|english)", "without (jargon|acronyms)",
    "(one|1) (question|step|thing|topic|change|command|problem|idea|issue|point|option|suggestion) at a time")
_DEFINITE = frozenset("the this that these those it them my his her its our".split())


def manner(words: Words) -> bool:
    """"explain things step by step", "use fewer big words": a manner, nothing definite before it."""
    at = MANNER.find(words)
    return at >= 0 and not _DEFINITE & set(words[:at])
