"""The cues of an instruction the teaching scorer reads, grouped by what they signal (English,
with the French, German and Spanish words people type out of habit); forms.py has the other
kinds of clause (memory requests, questions, corrections ...) and what rules one out.

Each group is a small closed class of function words and constructions (time adverbials, modal
requests, speech verbs, question words, negations), not a list of instructions: what an
instruction says is open, how people mark one is not. Every cue is searched for in the words of
a masked clause (`segment.mask`: lower-case, quotes and code spans replaced, `phrases.Words`:
punctuation stripped), so a cue inside a quotation counts for nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tmg.memory.teaching import lexicon
from tmg.memory.teaching.phrases import Phrases, Words
from tmg.memory.teaching.segment import TEXT_KINDS

# Words that open a clause without changing what it does ("ok so, btw, also: never ...").
DISCOURSE = Phrases(
    "ok", "okay", "k", "kk", "alright", "all right", "also", "and", "so", "btw", "by the way", "oh", "ah", "well",
    "hey", "hmm", "hmmm", "right", "fine", "great", "cool", "lovely", "perfect", "good", "yes", "yeah", "yep", "sure",
    "thanks", "thank you (so much|)", "one more thing (for the future|)", "another thing", "ps", "p.s", "plus",
    "(new|one|a|another|house|golden|general|standing|simple) rule (for you|)",
    "then", "now", "just", "tmg", "important", "reminder", "rule", "i told you (already|)", "i said", "again",
    "d'accord", "bon", "alors", "aussi", "und", "noch etwas", "vale", "bueno", "además",
    # interjections, the closed class that opens a clause and carries nothing of it
    "eh", "meh", "huh", "hm", "hmmm", "welp", "whoa", "wow", "oops", "lol", "lmao", "omg", "ffs", "jeez", "gosh",
    "damn", "dammit", "argh", "ahh", "ohh", "yo", "dude", "bro", "listen", "honestly", "seriously", "anyway",
    "anyways", "um", "umm", "uh", "er", "erm", "ugh", "oh well", "ok so", "okay so", "so yeah", "ah well", "boh",
    "ecco", "allora", "bem", "olha", "pronto", "tja", "naja", "also gut", "bah", "ben", "euh", "pues", "oye",
    # and, by the way, in the languages whose "and" is no preposition besides
    "y", "et", "og", "och", "por cierto", "per cert", "au fait", "übrigens", "ubrigens", "comunque", "tra l'altro",
    "trouwens", "forresten", "förresten", "a propósito", "aliás")
POLITE = Phrases("please", "pls", "plz", "kindly", "bitte", "por favor", "s'il te (plaît|plait)",
                 "s'il vous (plaît|plait)", "stp", "svp", *lexicon.PLEASE)

# Scope in time. STRONG alone makes a clause standing; WEAK only where it qualifies the
# assistant's doing (judge._assistant_habit).
# For this conversation only: an instruction that holds until the session ends, not beyond (not pinned).
_THIS_CHAT = ("for the rest of (this|the|our) (chat|conversation|session|thread)",
              "(for|in|during) (this|the|today's) (chat|conversation|session|thread)",
              "(just|only) for (this|today's|the) (chat|conversation|session|thread)", *lexicon.THIS_CHAT)
THIS_CHAT = Phrases(*_THIS_CHAT)
STRONG_TIME = Phrases(
    "from now (on|)", "from here (on|) (out|)", "from this point (on|forward|)", "(going|moving) forward",
    "in (the|) future", "for the future", "for future (reference|answers|replies|chats)", "henceforth", "hereafter",
    "from today (on|)", "for all (time|times)", "starting (now|today)", "for the rest of (this|the|our)", "(for|in) (all|any) future",
    "(unless|until) (i|you) (say|tell you|say so) otherwise", "until further notice",
    "désormais", "desormais", "dorénavant", "dorenavant", "(à|a) partir de maintenant", "(à|a) partir d'aujourd'hui",
    "(à|a) l'avenir", "ab jetzt", "ab sofort", "von (nun|jetzt) an", "künftig", "kunftig", "zukünftig", "zukunftig",
    "in zukunft", "a partir de ahora", "de ahora en adelante", "desde ahora", "en adelante", "en el futuro",
    # the same, in the languages the learned reading knows and people write without accents
    "(d'ora|da ora|da adesso) in (poi|avanti)", "daqui (pra|para a|pra a|em) (frente|diante)", "de agora em diante", "a partir de agora", "voortaan", "vanaf nu", "in het vervolg",
    "i (fortsättningen|fortsattningen)", "från och med nu", "fran och med nu", "fra nu af", "fra nå av", "fra na av",
    "od (teraz|tej pory|dzisiaj)", "odtąd", "odtad", "od (teď|ted|nynějška|nynejska)", "odteď", "odted",
    "de acum (înainte|inainte|încolo|incolo)", "pe viitor", "mulai sekarang", "ke depannya", "tästä lähtien",
    "tasta lahtien", "jatkossa", "bundan (sonra|böyle|boyle)", *lexicon.FROM_NOW_ON, *_THIS_CHAT)
WEAK_TIME = Phrases(
    "always", "never", "whenever", "(every|each|any) time", "everytime", "anytime", "next time", "by default",
    "as a rule", "in general", "generally", "normally", "at all times", "all the time", "anymore", "any more", "no longer", "ever again",
    "ever", "everywhere", "toujours", "jamais", "(à|a|) chaque fois", "par défaut", "la prochaine fois", "immer",
    "nie", "niemals", "jedes mal", "nicht mehr", "standardmäßig", "grundsätzlich", "siempre", "nunca", "jamás",
    "cada vez", "ya no", "por defecto", "la próxima vez")
# After these words an always/never is the assistant's habit ("please always", "you should
# never", "give me always", ", always."); after anything else it is someone else's ("a function
# that always returns", "set git to always rebase", "he never").
HABIT_OPENERS = frozenset(
    "please pls plz kindly you u ya me and so then but also just or bitte favor te mir moi tu du".split())
MODALS = frozenset("should must will 'll would can could shall".split())

# A change of habit: stop doing, no more, keep to.
HABIT = Phrases(
    "(stop|quit|cease) (with|being)", "enough with", "no more", "no longer", "keep (to|using|with)",
    "keep (your|the|all|my|) (answers|replies|responses|explanations|it|them|em|things) "
    "(short|brief|simple|concise|under|below|plain|to)", "stick (to|with)", "stay (with|in)", "continue to",
    "prefer", "favor", "favour", "default to", "(don't|dont|do not) ever", "refrain from",
    "(arrête|arrêtez|arrete|arrêter|arreter) de",
    "(can|could|would|will) (you|u) (please|) not", "please not",
    "(cesse|cessez|cesser) de", "(hör|höre|hor) auf", "aufhören", "(deja|dejar) de", "para de", "basta de")


def this_chat(words: Words) -> bool:
    """The clause limits itself to this conversation: it holds until the chat ends, not pinned."""
    return THIS_CHAT.find(words) >= 0 or lexicon.this_chat_marked(" ".join(words))


def habit_change(words: Words, after: Iterable[int] = ()) -> bool:
    """"stop doing", "keep to", "no more" where a clause's verb stands, after "to" ("I'd like you
    to stop using ..."), or at `after` (the end of a request: "peux-tu arrêter de ...")."""
    for index in [*clause_starts(words), *(i + 1 for i, w in enumerate(words) if w == "to"), *after]:
        if HABIT.match_at(words, index):
            return True
        if index < len(words) and words[index] in ("stop", "quit", "cease") and index + 1 < len(words) \
                and words[index + 1].endswith("ing"):
            return True
    return False


# Preferring: a preference about what the assistant does (standing by itself).
PREFERENCE = Phrases(
    "i (really|) prefer", "(i'd|i would) (really|much|) (prefer|rather)", "i (really|) like it (better|) when",
    "i (never|no longer) (want|need|like)", "i (don't|do not) ever want",
    "i (don't|dont|do not) like (it|) when", "i hate (it|) when", "i (can't|cant|cannot) stand",
    "what i (really|) (want|need|prefer|like) is", "(for|to) me (it|) is better", "(it's|it is) better for me",
    "(i'd|i would) (really|truly|greatly|so|) appreciate (it|) if you", "je (préfère|prefere)", "mir ist (es|) lieber", "prefiero",
    "(i'd|i would) (really|) (love|like|prefer) it if your",  # "I'd love it if your worksheets had ..."
    "(i|i'd|i would) (really|) (want|like|love|need|prefer) (all|my|your|future|short|shorter|long|longer|brief|concise"
    "|detailed|simple|plain|more|fewer|less|) (future|) (answers|replies|responses|explanations|examples|code"
    "|summaries|emails|commit messages)")
# Asking or telling the assistant to do something (directive; by itself only for now).
ADDRESSED_MODAL = Phrases(
    "(i'd|i would) (really|) like you to", "(i'd|i would) (really|) like that (you|u)", "i want that (you|u)", "(want|need|expect) you to", "make sure (you|to|that)", "i (must|) insist (that|) you",
    "be sure to", "(you|u) (should|must|shall)", "(you|u) (need|have) to", "(you|u) are to", "(you're|youre) to",
    "(you'll|youll|u'll) (always|never)", "(you|u) will (always|never)", "(please|pls|plz|kindly) (you|u) will", "(j'aimerais|je voudrais|je veux) que tu",
    "tu dois", "il faut que tu", "ich (möchte|mochte|will)", "ich hätte gern", "du (sollst|musst)", "quiero que",
    "me (gustaría|gustaria) que", "debes", "tienes que")

# A rule stated about a project or a kind of thing: "every PR needs ...", "this codebase uses ...".
RULE = Phrases(
    "must", "should", "need", "needs", "need to", "needs to", "has to", "have to", "require", "requires",
    "(is|are) required", "only", "use", "uses", "live", "lives", "goes", "belong", "belongs", "follow", "follows",
    "(is|are) called", "we (always|never|only|usually|don't|dont|do not)", "make it a rule", "gilt", "verwenden", "nutzen",
    "benutzen", "utilisons", "usamos")


def quantified(words: Words) -> bool:
    """A generic subject: "every PR ...", "in this repository, every PR ..."."""
    start = 0
    if words and words[0] in ("in", "for"):
        start = next((i for i in sorted(words.breaks) if 0 < i <= 6), 0)
    return start + 1 < len(words) and words[start] in ("every", "all", "each", "any", "no")


# Instruction verbs a clause may start with (the imperative mood, which has no ending of its own
# in English): a lexicon of what people tell an assistant to do, and their French, German and
# Spanish forms.
VERB_WORDS = frozenset("""
use write answer reply respond give show keep put add include stop start avoid prefer make run call format explain
cite sign assume treat default ask tell send mention suggest recommend quit skip drop leave try spell speak talk
refer address name indent wrap limit cap list mark label print test lint commit push deploy check remind warn prefix
end begin open link reference comment document annotate type quote translate summarise summarize number sort order
group split break return be stick stay follow obey respect consider prioritise prioritize focus emphasise emphasize
highlight bold capitalise capitalize abbreviate shorten expand elaborate clarify confirm verify validate omit exclude
ignore offer provide generate produce output render display present structure organise organize align save store
log build install upgrade update pin lock bump tag rebase squash merge review approve flag report escalate cc copy
attach greet thank apologise apologize guess invent pretend claim say switch change convert go do think double-check
take get set read look restrict reduce cut favor favour target remember adjust adapt tailor measure calculate compute
round estimate scale express state describe compare phrase frame handle choose pick opt lean err tone soften match
mirror define specify outline stress note credit date weigh refrain ditch remove delete strip trim replace swap
substitute rename draw plot chart tabulate act behave play mimic finish conclude lowercase uppercase
réponds répondez utilise utilisez écris écrivez mets mettez donne donnez évite évitez arrête arrêtez garde gardez
ajoute ajoutez parle parlez fais faites dis dites sois soyez tutoie vouvoie commence termine explique expliquez
préfère n'utilise n'écris
antworte nutze benutze verwende schreib schreibe gib lass vermeide sag sprich nimm zeig erkläre halte füge setze
bleib sei mach
responde respóndeme contesta usa utiliza escribe da dame pon evita habla di dime sigue mantén incluye explica sé
""".split()) | lexicon.IMPERATIVES
_VERB_SUFFIXES = ("-moi", "-toi", "-me", "-nous")
# After these a clause's own verb may follow: "so answer", "please never", "bitte gib".
VERB_OPENERS = frozenset(
    "so and then but please pls plz just also kindly bitte favor always never siempre nunca toujours jamais immer "
    "nie niemals".split())


def is_verb(word: str) -> bool:
    for suffix in _VERB_SUFFIXES:
        word = word.removesuffix(suffix)
    return word in VERB_WORDS


def clause_starts(words: Words) -> list[int]:
    """Where a clause's own verb may stand: first, after a comma or colon, or after "so",
    "and", "please" ..."""
    return [i for i in range(len(words)) if i in words.breaks or words[i - 1] in VERB_OPENERS]


SUBJECTS = frozenset("i you u we he she they it i'm you're we're they're".split())
_CONJUNCTIONS = frozenset("so and then but".split())


def imperative(words: Words, anywhere: bool = True) -> bool:
    """An instruction verb where a clause's own verb goes, with no subject before it ("always
    use ...", not "you always give ..."); `anywhere` False: at its start only."""
    for index in clause_starts(words):
        if not anywhere and index > 0 and any(w not in VERB_OPENERS for w in words[:index]):
            return False
        start = max((b for b in words.breaks if b <= index), default=0)
        start = max([start] + [i + 1 for i in range(start, index) if words[i] in _CONJUNCTIONS])
        if is_verb(words[index]) and not SUBJECTS & set(words[start:index]) and not _heads_subject(words, index):
            return True  # (a subject is looked for since the last comma or "so", "and" ...)
    return False


_FINITE = frozenset("is are was were has have does do doesn't don't isn't aren't wasn't hasn't".split())


def _heads_subject(words: Words, index: int) -> bool:
    """"default client has no timeout", "test files are in tests/": the word starts a subject
    (a finite verb follows it or the noun after it), it is no imperative."""
    after = words[index + 1:index + 3]
    if after[:1] and after[0] in _FINITE:
        return index + 1 not in words.breaks
    return len(after) == 2 and after[1] in _FINITE and after[0] not in SUBJECTS and index + 2 not in words.breaks


_WANT = Phrases("i (only|just|really|) (want|need|expect|like)")


# A request as a wish: "I would be very grateful if ... you could", "it'd be great if you".
_GLAD_IF = Phrases("(i'd|i would|i'll|i will|i'm|i am|it'd|it would|it will|that'd|that would) be (very|really|so|most"
                   "|extremely|truly|super|) (grateful|thankful|glad|happy|obliged|great|nice|helpful|lovely|wonderful"
                   "|ideal|better|good|awesome|amazing) if")


def wants_from_assistant(words: Words) -> bool:
    """"i only want python 3.12 syntax from you", "I'd be grateful if, whenever ..., you could":
    a standing want, addressed."""
    at = _WANT.find(words)
    if at >= 0 and any(words[i:i + 2] in (["from", "you"], ["from", "u"]) for i in range(at, len(words))):
        return True
    at = _GLAD_IF.find(words)
    return at >= 0 and any(w in ("you", "u") for w in words[at:])


_STATE_VERBS = frozenset("""
know understand think see get like care have want need remember mean believe feel agree thought knew saw seen been
heard said got gotten went gone made came took taken found felt told left had did done wrote written
""".split())
_INVERSION = frozenset("have had did was were will am is are".split())
_NEGATORS = Phrases("(don't|dont|do not|never|no need to|nie|niemals|nunca|jamás|jamas)")
_REMINDER = Phrases("forget to")  # "don't forget to add tests": a reminder for this task
_SPANISH_NEGATIVE = Phrases("no (uses|escribas|pongas|hagas|digas)", "no me des")


def negative_imperative(words: Words) -> bool:
    """"don't ...", "never ...", "n'utilise jamais", "no uses ...": not "don't know", "never
    thought", "never have I"."""
    for index in clause_starts(words):
        length = _NEGATORS.match_at(words, index)
        if length and index + length not in words.breaks:
            at = index + length
            while at < len(words) and words[at] in ("again", "ever"):
                at += 1  # "never again am I ..."
            after = words[at:at + 2]
            if not after or after[0] in _STATE_VERBS or after[0].endswith(("ed", "ing")):
                continue
            if after[0] in _INVERSION and after[1:2] == ["i"]:
                continue
            if words[index] != "never" and _REMINDER.match_at(words, at):
                continue
            return True
        if _SPANISH_NEGATIVE.match_at(words, index):
            return True
        word = words[index]
        if (word == "ne" or word.startswith("n'")) and any(w in ("jamais", "pas", "plus")
                                                              for w in words[index + 1:index + 4]):
            return True
    return False


_DEFINITE = frozenset("the this that these those it them my his her its our".split())
_DONT = Phrases("(don't|dont|do not)")


def definite_object(words: Words) -> bool:
    """"don't include the tests": a "don't" about a thing of this task (by itself, for now)."""
    for index in range(len(words)):
        length = _DONT.match_at(words, index)
        if length and index + length + 1 < len(words) and words[index + length + 1] in _DEFINITE:
            return True
    return False


_PROHIBITION = Phrases("(no|zero|no more|nothing but|only|kein|keine|keinen|pas de|plus de|sin|nada de)")
_NOT_PROHIBITED = frozenset(
    "thanks thank problem worries need idea way clue offence offense rush doubt wonder pressure sir one such "
    "its it's it that that's this i you we they he she is was the a an".split())


def prohibition(words: Words) -> bool:
    """"no emojis", "no more `any` in TypeScript answers", "make it a rule: no semicolons", "so
    please no tables": not "no thanks", "no, I meant"."""
    for index in sorted(words.breaks | {i + 1 for i in POLITE.finditer(words)}):
        length = _PROHIBITION.match_at(words, index)
        end = index + length
        segment_end = min([b for b in words.breaks if b > index] + [len(words)])
        if length and end < len(words) and end not in words.breaks and words[end] not in _NOT_PROHIBITED \
                and segment_end - index <= 8:  # a short ban, to its comma ("no tables or box drawing, lists are fine")
            return True
    return False


def conditional(words: Words) -> bool:
    """"when you write shell scripts for me, start them ...", "when writing python, ..."; or, after
    what to do, the kind of work it is for: "... use them when you explain a process"."""
    if any(words[i - 2:i] in (["when", "you"], ["whenever", "you"], ["when", "u"]) and is_verb(words[i])
           and words[i] not in _ONE_TIME for i in range(3, len(words))):
        return True
    if len(words.breaks) < 2:
        return False
    return CONDITIONAL.starts(words) or (len(words) > 1 and words[0] in ("when", "whenever", "while", "if")
                                         and words[1].endswith("ing"))


# "send it when you finish": a moment, not a kind of work.
_ONE_TIME = frozenset("finish get are have can do start stop see check test run hear".split())


# The user's lasting situation, then what the assistant is to do because of it: "I shoe mostly
# draft horses, so when I ask about nail sizes assume heavy horses", "my screen reader chokes on
# tables, so give me lists instead", "I'm a one-liner person, keep answers that tight". A signal
# the learned reading weighs, not a rule: "I'm in a rush, so just give me the command" has the
# same shape and is for one answer.
_SITUATION = frozenset("i i'm im i've my we we're our the this".split())


_BECAUSE = frozenset("since because as cause cuz coz".split())  # "since I work at altitude, always adjust ..."
_ADVERBS = frozenset("always please pls just".split())  # before the verb: "..., always adjust the temps"


def reason_first(words: Words, general: bool = False) -> bool:
    """A reason of the user's, then the rule ("I play bass, so when we talk songs just give me ...");
    `general`: only a rule that says when or for what it holds ("so whenever ...", "so any recipe
    you give me ..."), not a bare verb, which may be a task's ("my wife is vegan so make the lasagne ...")."""
    opens = words[1:2] if words[:1] and words[0] in _BECAUSE else words[:1]
    if not opens or opens[0] not in _SITUATION:
        return False
    for at in range(2, len(words) - 1):
        if words[at] != "so" and at not in words.breaks:
            continue
        after = Words(" ".join(words[at + (words[at] == "so"):]))
        verb = Words(" ".join(after[1:])) if after[0] in _ADVERBS else after
        if CONDITIONAL.starts(after) or (after[0] in ("any", "every", "all") and {"you", "u"} & set(after)) \
                or (not general and ((imperative(verb, anywhere=False) and not makes_one(verb))
                                     or negative_imperative(after))):
            return True
    return False


CONDITIONAL = Phrases(
    "(if|when|whenever|every time|everytime|each time|any time|anytime|wenn|sobald|si|quand|lorsque|cuando"
    "|cada vez que) (i|you|u|we|a|an|the|someone|my|our|je|tu|ich|du|yo|tú|tu)")
_THIRD = frozenset("he she they it his her their".split())
_THIRD_NOUNS = frozenset(
    "colleague boss manager teacher prof friend team wife husband son daughter mom dad cat dog code script app build "
    "test tests server".split())


def third_person(words: Words) -> bool:
    if not words:
        return False
    return words[0] in _THIRD or (words[0] == "my" and any(w in _THIRD_NOUNS for w in words[1:3]))


# A task whose object clause holds the words: "explain why you should never ...", "write a
# function that always ...": only what comes before that clause is the user's instruction.
_TASKS = frozenset(
    "explain write describe list find create generate build draft compose implement design summarise summarize "
    "translate make code name tell remind warn inform".split())
_TASK_PAIRS = Phrases("(tell|show|give|teach|help) me")
_SUBORDINATORS = frozenset("why how what whether which who that where when if saying telling asking reminding".split())


def task_object_start(words: Words) -> int | None:
    """Where the object clause of a leading task verb starts, or None. After "can you" any word
    is the verb, so a text it is to write ("can you right a reminder for the group chat that from
    now on ...") holds the words, not the user."""
    at = 0
    while at < len(words) and words[at] in ("please", "can", "could", "would", "will", "you"):
        at += 1
    if at >= len(words):
        return None
    pair = _TASK_PAIRS.match_at(words, at)
    asked = at > 0 and words[at - 1] == "you"
    if not pair and words[at] not in _TASKS and not (asked and TEXT_KINDS & set(words[at + 1:at + 5])):
        return None
    for index in range(at + max(pair, 1), len(words)):
        if words[index] in _SUBORDINATORS:
            return index
    return None


_ARTICLES = frozenset("a an un une una uno un' ein eine einen einem een um uma en ett et egy".split())
_NEED = re.compile(r"(?:i need|necesito|necessito|ich brauche|j'ai besoin d'?|preciso de|ho bisogno di)\b")
_CLITIC = re.compile(r"\w+-(?:me|moi|mi|m'|nos|ens)$")  # "Fes-me", "dis-moi", "fais-moi"
_FOR_ME = frozenset("me us mir uns".split())  # "Draft me a note", "Mach mir eine Liste"
_ENCLITIC = re.compile(r"\w{2,}(?:me|mi|nos|ci)$")  # "hazme un ...", "scrivimi una ...": Spanish and Italian
_UN = frozenset("un una uno unos unas un'".split())


def makes_one(words: Words) -> bool:
    """An imperative or a need with an indefinite object right after it: one thing to make ("Schreib
    mir bitte eine kurze Info ...", "Fes-me un resum ...", "Necesito un modelo de carta ...")."""
    lead = imperative(words, anywhere=False) or bool(words and _CLITIC.match(words[0])) \
        or (len(words) > 2 and words[1] in _FOR_ME) or bool(_NEED.match(" ".join(words[:4]))) \
        or (len(words) > 1 and words[1] in _UN and _ENCLITIC.match(words[0]) is not None)
    return lead and any(w in _ARTICLES for w in words[1:5])
