"""The cues the teaching scorer reads, grouped by what they signal (English, with the French,
German and Spanish words people type out of habit).

Each group is a small closed class of function words and constructions (time adverbials, modal
requests, speech verbs, question words, negations), not a list of instructions: what an
instruction says is open, how people mark one is not. Every cue is searched for in the words of
a masked clause (`segment.mask`: lower-case, quotes and code spans replaced, `phrases.Words`:
punctuation stripped), so a cue inside a quotation counts for nothing.
"""

from __future__ import annotations

import re

from tmg.memory.teaching.phrases import Phrases, Words

# Words that open a clause without changing what it does ("ok so, btw, also: never ...").
DISCOURSE = Phrases(
    "ok", "okay", "k", "kk", "alright", "all right", "also", "and", "so", "btw", "by the way", "oh", "ah", "well",
    "hey", "hmm", "hmmm", "right", "fine", "great", "cool", "lovely", "perfect", "good", "yes", "yeah", "yep", "sure",
    "thanks", "thank you (so much|)", "one more thing (for the future|)", "another thing", "ps", "p.s", "plus",
    "then", "now", "just", "tmg", "important", "reminder", "rule", "i told you (already|)", "i said", "again",
    "d'accord", "bon", "alors", "aussi", "und", "noch etwas", "vale", "bueno", "además")
POLITE = Phrases("please", "pls", "plz", "kindly", "bitte", "por favor", "s'il te (plaît|plait)",
                 "s'il vous (plaît|plait)", "stp", "svp")

# Scope in time. STRONG alone makes a clause standing; WEAK only where it qualifies the
# assistant's doing (judge._assistant_habit).
STRONG_TIME = Phrases(
    "from now (on|)", "from here (on|) (out|)", "from this point (on|forward|)", "(going|moving) forward",
    "in (the|) future", "for the future", "for future (reference|answers|replies|chats)", "henceforth", "hereafter",
    "from today (on|)", "starting (now|today)", "for the rest of (this|the|our)",
    "désormais", "desormais", "dorénavant", "dorenavant", "(à|a) partir de maintenant", "(à|a) partir d'aujourd'hui",
    "(à|a) l'avenir", "ab jetzt", "ab sofort", "von (nun|jetzt) an", "künftig", "kunftig", "zukünftig", "zukunftig",
    "in zukunft", "a partir de ahora", "de ahora en adelante", "desde ahora", "en adelante", "en el futuro")
WEAK_TIME = Phrases(
    "always", "never", "whenever", "(every|each|any) time", "everytime", "anytime", "next time", "by default",
    "as a rule", "in general", "at all times", "all the time", "anymore", "any more", "no longer", "ever again",
    "ever", "everywhere", "toujours", "jamais", "(à|a|) chaque fois", "par défaut", "la prochaine fois", "immer",
    "nie", "niemals", "jedes mal", "nicht mehr", "standardmäßig", "grundsätzlich", "siempre", "nunca", "jamás",
    "cada vez", "ya no", "por defecto", "la próxima vez")
# After these words an always/never is the assistant's habit ("please always", "you should
# never", "give me always", ", always."); after anything else it is someone else's ("a function
# that always returns", "set git to always rebase", "he never").
HABIT_OPENERS = frozenset(
    "please pls plz kindly you u ya me and so then but also just or bitte favor te mir moi tu du".split())
MODALS = frozenset("should must will 'll would can could shall".split())

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
    "(write|give|send|draft|generate|produce|suggest|show)",
    "(you|u) (write|give|send|draft|generate|produce|suggest|show) (me|for)", "my answers", "commit messages")


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
    return GENERIC_WRITING.find(words) >= 0


# A change of habit: stop doing, no more, keep to.
HABIT = Phrases(
    "(stop|quit|cease) (with|being)", "enough with", "no more", "no longer", "keep (to|using|with)",
    "keep (your|the|all|my|) (answers|replies|responses|explanations|it|them|things) "
    "(short|brief|simple|concise|under|below|plain|to)", "stick (to|with)", "stay (with|in)", "continue to",
    "prefer", "favor", "favour", "default to", "(don't|dont|do not) ever", "(arrête|arrêtez|arrete) de",
    "(cesse|cessez) de", "(hör|höre|hor) auf", "deja de", "para de", "basta de")


def habit_change(words: Words) -> bool:
    for index in clause_starts(words):
        if HABIT.match_at(words, index):
            return True
        if words[index] in ("stop", "quit", "cease") and index + 1 < len(words) and words[index + 1].endswith("ing"):
            return True
    return False


# Preferring: a preference about what the assistant does (standing by itself).
PREFERENCE = Phrases(
    "i (really|) prefer", "(i'd|i would) (really|much|) (prefer|rather)", "i (really|) like it (better|) when",
    "i (don't|dont|do not) like (it|) when", "i hate (it|) when", "i (can't|cant|cannot) stand",
    "what i (really|) (want|need|prefer|like) is", "(for|to) me (it|) is better", "(it's|it is) better for me",
    "(i'd|i would) appreciate (it|) if you", "je (préfère|prefere)", "mir ist (es|) lieber", "prefiero")
# Asking or telling the assistant to do something (directive; by itself only for now).
ADDRESSED_MODAL = Phrases(
    "(i'd|i would) (really|) like you to", "i (really|) (want|need|expect) you to", "make sure (you|to|that)",
    "be sure to", "(you|u) (should|must|shall)", "(you|u) (need|have) to", "(you|u) are to", "(you're|youre) to",
    "(you'll|youll|u'll) (always|never)", "(you|u) will (always|never)", "(j'aimerais|je voudrais|je veux) que tu",
    "tu dois", "il faut que tu", "ich (möchte|mochte|will)", "ich hätte gern", "du (sollst|musst)", "quiero que",
    "me (gustaría|gustaria) que", "debes", "tienes que")

# A rule stated about a project or a kind of thing: "every PR needs ...", "this codebase uses ...".
RULE = Phrases(
    "must", "should", "need", "needs", "need to", "needs to", "has to", "have to", "require", "requires",
    "(is|are) required", "only", "always", "never", "use", "uses", "live", "lives", "goes", "belong", "belongs",
    "follow", "follows", "(is|are) called", "verwenden", "nutzen", "benutzen", "utilisons", "usamos")


def quantified(words: Words) -> bool:
    """A generic subject: "every PR ...", "in this repository, every PR ..."."""
    start = 0
    if words and words[0] in ("in", "for"):
        start = next((i for i in sorted(words.breaks) if 0 < i <= 6), 0)
    return start + 1 < len(words) and words[start] in ("every", "all", "each", "any", "no")


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
    """A manner every answer keeps: "be concise", "answer in German", "write to me in French"."""
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
    return False


# Memory requests: keep this.
MEMORY = Phrases(
    "remember", "memorize", "memorise", "take note", "make a note", "keep in mind", "bear in mind",
    "(don't|dont|do not|never) forget", "note", "for the record", "fyi", "for your information", "just so you know",
    "for future reference", "(save|store|remember) this", "write this down", "souviens-toi", "rappelle-toi",
    "retiens", "(note|notez) (bien|) que", "n'oublie pas", "garde en (tête|tete)", "pour info",
    "pour (mémoire|memoire)", "(merk|merke) dir", "merken sie sich", "(denk|denke) daran", "vergiss nicht",
    "behalte im kopf", "zur info", "notiere", "notier", "recuerda", "(acuérdate|acuerdate)", "ten en cuenta",
    "no olvides", "toma nota", "apunta", "para que conste", "para tu (información|informacion)")
MEMORY_OPENERS = frozenset("please pls and so also just".split())
REQUEST_HEADS = Phrases("(could|can|would|will) (you|u)")
NOT_MEMORY = Phrases(
    "(do|did) (you|u) (still|) remember", "(can|could) (you|u) remember (what|when|how|where|who|if|my|the|me)",
    "remember (when|me|how|what|where|why|if)", "i (can't|cant|cannot|don't|dont|do not|) remember",
    "(if|as) i remember", "note (this|it) (is|was)", "note to self", "te (acuerdas|recuerdas)", "tu te souviens",
    "erinnerst du dich")


def memory_request(words: Words) -> bool:
    """"Remember that ...", "please keep in mind ...", "..., please remember that"."""
    if NOT_MEMORY.find(words) >= 0:
        return False
    for index in MEMORY.finditer(words):
        if index in words.breaks or words[index - 1] in MEMORY_OPENERS:
            return True
        head = REQUEST_HEADS.find(words, max(0, index - 3))
        if 0 <= head < index:
            return True
    return False


# Forms that teach nothing however they are worded.
_QUESTION_WORDS = frozenset("""
what whats what's why how hows how's where wheres which who whom whose is are was were does did has have should
shall pourquoi comment quel quelle quels quelles qu'est-ce combien qui où warum wieso weshalb wie was welche
welcher welches wo wann wer ist sind qué cómo cuál cual dónde cuándo quién
""".split())
QUESTION_HEADS = Phrases(
    "do (i|you|we|they|it|people|these|those|the|u)", "can (i|we|it|this|that|one|there|someone)",
    "could (i|we|it|this|that)", "will (it|this|that|i|there)", "would (it|this|that|i)", "any idea",
    "when (is|are|does|do|did|was|will|should|can)", "est-ce que", "quand (est|sont|dois)", "gibt es", "kann ich",
    "hast du", "por qué")
_REQUEST_LEAD = frozenset("please pls hey so and also ok".split())
REQUEST = Phrases(
    "(could|can|would|will|wouldn't|can't) (you|u|ya)", "(would|do) you mind", "pourrais-tu", "peux-tu",
    "pourriez-vous", "pouvez-vous", "(kannst|könntest|konntest|würdest|wurdest) du", "(können|konnen|könnten) sie",
    "puedes", "podrías", "podrias")


def question_start(words: Words) -> bool:
    return bool(words) and (words[0] in _QUESTION_WORDS or QUESTION_HEADS.starts(words))


def request_start(words: Words) -> bool:
    """A request in question form: "could you stop ...?", "can you always ..."."""
    at = 0
    while at < len(words) and words[at] in _REQUEST_LEAD:
        at += 1
    return REQUEST.match_at(words, at) > 0


HYPOTHETICAL_START = Phrases(
    "(and|so|but|) (if|when) (i|you|u|we) (said|told|were|was|would|had|wanted|asked|wrote|typed|did|could|might)",
    "(and|so|but|) (if|when) (i'd|you'd|we'd)", "(and|so|) (suppose|supposing|imagine|pretend|hypothetically)",
    "in theory", "say (i|you|we)", "(imagine|imaginons|supposons|imagina|supongamos)")
HYPOTHETICAL = Phrases(
    "what if", "(let's|lets) say", "in a world where", "would you (still|ever)",
    "si je (disais|te disais|voulais|demandais)", "et si", "angenommen", "stell dir vor", "was (wäre|ware) wenn",
    "wenn ich (sagen würde|sagte|wollte)", "qué pasaría si", "que pasaria si", "si te dijera")


def hypothetical(words: Words) -> bool:
    return HYPOTHETICAL_START.starts(words) or HYPOTHETICAL.find(words) >= 0


SPEECH = Phrases(
    "says", "said", "say", "told", "tells", "wrote", "writes", "insists", "insisted", "claims", "claimed", "thinks",
    "believes", "recommends", "recommended", "suggests", "suggested", "mentioned", "wants us", "asked us",
    "asks us", "keeps saying", "posted", "replied", "dit", "disait", "a dit", "écrit", "pense", "sagt", "sagte",
    "meint", "schreibt", "dice", "dijo", "escribió", "piensa")
REPORTED = Phrases("according to", "i (read|heard)", "apparently", "selon", "laut", "según", "segun")
_SPEAKERS_OWN = frozenset("i you u we ya je tu ich du yo".split())


def reported(words: Words) -> bool:
    """Someone else's words: "my colleague says you should never ...", "the docs say ..."."""
    if REPORTED.find(words) >= 0:
        return True
    for index in SPEECH.finditer(words):
        before = words[max(0, index - 3):index]
        if before and not _SPEAKERS_OWN & set(before):
            return True
    return False


ASIDE = Phrases(
    "(don't|dont|do not|no need to|never) (you|) (worry|bother|fret|panic|stress|sweat|mind|hesitate)",
    "never mind", "nevermind", "nvm", "no worries", "no problem", "not a problem", "no biggie",
    "(don't|dont) get me wrong", "(don't|dont) mind me", "(don't|dont) take (it|this) (personally|wrong)",
    "never (have|had|did|was|were|will) i", "not to worry", "ne t'inquiète pas", "ne t'inquiete pas",
    "t'inquiète", "ne vous inquiétez pas", "pas de souci", "pas de (problème|probleme)", "laisse tomber",
    "peu importe", "keine sorge", "mach dir keine sorgen", "kein problem", "vergiss es", "schon gut",
    "no te preocupes", "no pasa nada", "(olvídalo|olvidalo)", "da igual", "no importa")
_TASK_THINGS = ("refactor|change|pr|commit|function|file|script|query|snippet|email|draft|paragraph|answer|reply"
                "|example|test|one|case|question|task|method|class|line|loop|diff|patch|branch|ticket|bug|version|run"
                "|build|step|letter|post|message")
ONE_OFF = Phrases(
    "yet", "for now", "right now", "just now", "this time", "for today", "today", "tonight", "at the moment",
    "just once", "this one", f"(in|for|on|of) (this|that) ({_TASK_THINGS})",
    f"(in|for|on|of) (the|your) next ({_TASK_THINGS})", "pour (l'instant|le moment)", "cette fois", "vorerst",
    "diesmal", "erstmal", "heute", "por ahora", "esta vez", "de momento")

# About this project, or about the user wherever they are.
_PLACES = "repo|repository|project|codebase|code base|monorepo|workspace|folder|directory|dir"
_OURS = ("repo|codebase|project|app|service|api|ci|pipeline|build|tests|test|test suite|deploys|deploy|deployments"
         "|releases|release|schema|database|db|dataset|warehouse|design system|backend|frontend|staging|prod"
         "|production|cluster|infra|stack|linter|formatter|monorepo|migrations|migration")
PROJECT = Phrases(
    f"(in|for|across|throughout|inside|within|of|on) (this|the|our) ({_PLACES})",
    "this (repo|repository|project|codebase|code base|monorepo)", "(in|around|over) here", "here we",
    f"our ({_OURS})", "the (staging|prod|production) (db|database|server|env|environment|cluster|host|box)",
    "(dans|pour) ce (projet|dépôt|depot|repo)", "notre (projet|dépôt|depot|code)",
    "(in|für|fur) (diesem|dieses|unserem) (projekt|repo|repository)",
    "(unser|unsere|unseren|unserem) (release|projekt|repo|code|ci|build)",
    "(en|para) este (proyecto|repositorio|repo)", "nuestro (proyecto|repositorio|código|codigo)")
PROJECT_START = Phrases("here (we|the|our|all|every|everything|nothing|no)")


def about_project(words: Words) -> bool:
    return PROJECT.find(words) >= 0 or PROJECT_START.starts(words)


PERSONAL = Phrases("everywhere", "in every (project|repo)", "all my (projects|repos)", "across (all|) projects",
                   "not just (in|) (this|here)")

# Corrections of the previous answer.
CONTRA_LEAD = Phrases(
    "no", "nope", "nah", "wrong", "incorrect", "false", "not quite", "not really", "not true", "not exactly",
    "actually", "wait", "um", "umm", "ugh", "erm", "uh", "nein", "non", "falsch", "faux", "pas du tout",
    "incorrecto", "falso", "en realidad", "eigentlich", "en fait",
    "(that's|thats|that is) (wrong|incorrect|not right|not true|outdated|not correct|not it|false|not what)",
    "i (don't|dont) think (that's|thats|this is) right", "i (don't|dont) think so", "(you're|you are) wrong",
    "you got it wrong", "that (isn't|isnt) right", "i think there's a mistake", "there's a mistake",
    "das stimmt (so|) nicht (ganz|)", "das ist falsch", "c'est faux", "ce n'est pas", "eso no es", "no es así",
    "no es asi", "está mal", "esta mal")
CONTRA = Phrases(
    "instead", "rather than", "no such", "not exist", "(doesn't|does not|don't|do not|didn't|did not|isn't|is not"
    "|aren't|wasn't) (exist|work|have|has|support|take|accept)", "(there's|there is) no",
    "(isn't|isnt) a (thing|flag|option|command|function|method|key)", "the (real|correct|right|actual|proper|true) *"
    " (is|are)", "(it's|its) actually", "should be", "(is|are|was) (deprecated|removed|outdated|wrong|incorrect)",
    "you mean", "wrong", "mistake", "sondern", "sino", "stimmt nicht")


def contradiction(body: str, words: Words) -> bool:
    """"X, not Y", "not X but Y", "doesn't exist", "the real one is", "pas X mais Y" ..."""
    if CONTRA.find(words) >= 0 or re.search(r",\s*not\s+\S", body):
        return True
    if "not" in words and "but" in words[words.index("not") + 1:words.index("not") + 4]:
        return True
    return "pas" in words and "mais" in words[words.index("pas"):]


ASSISTANT_WORDS = Phrases(
    "(you|u) (said|told|gave|suggested|wrote|recommended|mentioned|claimed|used)",
    "(you|u) keep (saying|using|suggesting)", "your (last|) (answer|example|command|suggestion|code|snippet|reply)",
    "the * (you|u) (gave|suggested|wrote|used|mentioned)", "du hast (gesagt|geschrieben)", "tu as dit",
    "dijiste")
NOT_CORRECTION = Phrases(
    "i mean", "i meant", "no thanks", "no thank you", "not now", "no need", "i have (another|a|one more) question",
    "question", "what i (asked|meant|wanted|said)", "not what i", "still",
    "(that's|thats|it's|its|is) (fine|ok|okay|good|great|perfect|correct|right|enough|alright|all right)")
# A correction asserts something: "it's 6379", "-k is kilobytes", "no such flag", "c'est ...".
ASSERTS = frozenset("""
is are was were it's its that's thats there's exists exist has have does doesn't don't isn't aren't wasn't such
c'est est sont ist sind es son heißt heisst called
""".split())
ASSERTS_NUMBER = re.compile(r"(?:^|\b(?:is|it'?s|its|it is|are|was|equals?|be|=)\s+)[-+]?\d[\d.,]*\b")

# How the assistant is called, and how the user is.
NAMING = Phrases(
    "(your|ur) name", "(you|u) are called", "(you're|youre|u're) called", "u r called", "(call|calling) yourself",
    "name yourself", "introduce yourself as", "du (heißt|heisst)", "tu t'appelles", "te llamas")
IDENTITY = Phrases("you're", "you are", "ur", "u r", "youre", "(your|ur) name", "du bist", "tu es", "eres")
USER_NAME = Phrases("my name is *", "my name's *", "call me *", "je m'appelle *", "ich (heiße|heisse) *", "me llamo *")
SELF_NAME = re.compile(r"\b(?:I am|I'm|my name is|call me|this is|je suis|ich bin|soy|me llamo)\s+"
                       r"((?:[A-Z][\w-]*)(?: [A-Z0-9][\w-]*){0,2})")

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
take get set read look restrict reduce cut favor favour
réponds répondez utilise utilisez écris écrivez mets mettez donne donnez évite évitez arrête arrêtez garde gardez
ajoute ajoutez parle parlez fais faites dis dites sois soyez tutoie vouvoie commence termine explique expliquez
préfère n'utilise n'écris
antworte nutze benutze verwende schreib schreibe gib lass vermeide sag sprich nimm zeig erkläre halte füge setze
bleib sei mach
responde respóndeme contesta usa utiliza escribe da dame pon evita habla di dime sigue mantén incluye explica sé
""".split())
_VERB_SUFFIXES = ("-moi", "-toi", "-me", "-nous")
# After these a clause's own verb may follow: "so answer", "please never", "bitte gib".
VERB_OPENERS = frozenset("so and then but please pls plz just also kindly bitte favor always never".split())


def is_verb(word: str) -> bool:
    for suffix in _VERB_SUFFIXES:
        word = word.removesuffix(suffix)
    return word in VERB_WORDS


def clause_starts(words: Words) -> list[int]:
    """Where a clause's own verb may stand: first, after a comma or colon, or after "so",
    "and", "please" ..."""
    return [i for i in range(len(words)) if i in words.breaks or words[i - 1] in VERB_OPENERS]


def imperative(words: Words, anywhere: bool = True) -> bool:
    """An instruction verb where a clause's own verb goes; `anywhere` False: at its start only
    (after "please", "so" ...)."""
    for index in clause_starts(words):
        if not anywhere and index > 0 and any(w not in VERB_OPENERS for w in words[:index]):
            return False
        if is_verb(words[index]):
            return True
    return False


_STATE_VERBS = frozenset("""
know understand think see get like care have want need remember mean believe feel agree thought knew saw seen been
heard said got gotten went gone made came took taken found felt told left had did done wrote written
""".split())
_INVERSION = frozenset("have had did was were will am is are".split())
_NEGATORS = Phrases("(don't|dont|do not|never|no need to|nie|niemals)")
_SPANISH_NEGATIVE = Phrases("no (uses|escribas|pongas|hagas|digas)", "no me des")


def negative_imperative(words: Words) -> bool:
    """"don't ...", "never ...", "n'utilise jamais", "no uses ...": not "don't know", "never
    thought", "never have I"."""
    for index in clause_starts(words):
        length = _NEGATORS.match_at(words, index)
        if length and index + length not in words.breaks:
            after = words[index + length:index + length + 2]
            if not after or after[0] in _STATE_VERBS or after[0].endswith(("ed", "ing")):
                continue
            if after[0] in _INVERSION and after[1:2] == ["i"]:
                continue
            return True
        if _SPANISH_NEGATIVE.match_at(words, index):
            return True
        word = words[index]
        if (word == "ne" or word.startswith("n'")) and any(w in ("jamais", "pas", "plus")
                                                              for w in words[index + 1:index + 3]):
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
    "thanks thank problem worries need idea way clue offence offense rush doubt wonder pressure sir one".split())


def prohibition(words: Words) -> bool:
    """"no emojis", "no more `any` in TypeScript answers": not "no thanks"."""
    length = _PROHIBITION.match_at(words, 0)
    return bool(length) and len(words) > length and length not in words.breaks \
        and words[length] not in _NOT_PROHIBITED


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
    "translate make code name".split())
_TASK_PAIRS = Phrases("(tell|show|give|teach|help) me")
_SUBORDINATORS = frozenset("why how what whether which who that where when if".split())


def task_object_start(words: Words) -> int | None:
    """Where the object clause of a leading task verb starts, or None."""
    at = 0
    while at < len(words) and words[at] in ("please", "can", "could", "you"):
        at += 1
    if at >= len(words):
        return None
    pair = _TASK_PAIRS.match_at(words, at)
    if not pair and words[at] not in _TASKS:
        return None
    for index in range(at + max(pair, 1), len(words)):
        if words[index] in _SUBORDINATORS:
            return index
    return None
