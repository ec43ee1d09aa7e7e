"""What kind of clause it is, beyond an instruction: a memory request, a question or a request in
question form, a hypothetical, an aside, a one-off, about the project or
about the user, a correction of the previous answer, a name (cues.py says how the cues are
searched for: words of a masked clause, never a quotation's)."""

from __future__ import annotations

import re

from tmg.memory.teaching import lexicon
from tmg.memory.teaching.phrases import Phrases, Words

# Memory requests: keep this.
MEMORY = Phrases(
    "remember", "memorize", "memorise", "take note", "make a note", "(keep|bear) (that|this|it|) in mind",
    "(don't|dont|do not|never) forget", "note", "for the record", "fyi", "for your information", "just so you know",
    "for future reference", "(save|store|remember) this", "write this down", "heads up", "heads-up",
    "(keep|save|store|file|note|jot|write) (that|this|it|these|those) (down|somewhere|safe|for me|for later|on file"
    "|handy|around|in memory)", "(keep|hold|treat|take|use) (that|this|it|these|those) as (context|background|a given)",
    "(please|) be (advised|aware)", "note down", "make note",
    "souviens-toi", "rappelle-toi",
    "retiens", "(note|notez) (bien|) que", "n'oublie pas", "garde en (tête|tete)", "pour info",
    "pour (mémoire|memoire)", "(merk|merke) dir", "merken sie sich", "(denk|denke) daran", "vergiss nicht",
    "behalte im kopf", "zur info", "notiere", "notier", "recuerda", "(acuérdate|acuerdate)", "ten en cuenta",
    "no olvides", "toma nota", "apunta", "para que conste", "para tu (información|informacion)", *lexicon.REMEMBER)
# A statement offered for later: "my thesis is on zebrafish sleep, in case that helps for later
# questions", "callsign's VK3QZX if you need it".
OFFERED = Phrases("in case (it|that|this) (helps|matters|comes up|is useful|is relevant|'s useful|'s relevant)",
                  "if (you|u) (ever|) need (it|that|this|to know)", "for (later|future) (questions|prompts|chats|conversations|answers)",
                  "for next time", "for context")
MEMORY_OPENERS = frozenset("please pls plz kindly favor bitte and so also just".split())
REQUEST_HEADS = Phrases("(could|can|would|will) (you|u)")
NOT_MEMORY = Phrases(
    "(do|did) (you|u) (still|) remember", "(can|could|will|would) (you|u) remember (what|when|how|where|who|if|my|the|me)",
    "remember (from now on|going forward|in future|next time|later) (what|anything|everything|things)",
    "remember (when|me|how|what|where|why|if)", "i (can't|cant|cannot|don't|dont|do not|) remember",
    "(if|as) i remember", "note (this|it) (is|was)", "note to self",
    # "remember to": a reminder, judged as an instruction ("remember to always use UTC") or a task
    "te (acuerdas|recuerdas)", "tu te souviens", "erinnerst du dich", *lexicon.REMINDER)


# A memory verb another verb governs: "help me to remember:", "I need you to remember that".
GOVERNING = Phrases("help me (to|)", "(want|need|like|ask|expect) (you|u) to", "try to", "make sure (you|to|)",
                    "be sure to")
# What the task at hand must be: "remember it has to be stable" keeps nothing for later.
_TASK_CONSTRAINT = Phrases("(it|this|that|they|these|those|the code|the function) (has to|have to|must|should"
                           "|needs to|need to|has got to|must not|can't|cannot|shouldn't)")


def task_constraint(words: Words) -> bool:
    """"keep in mind this has to run on Python 3.8": a memory verb on what the task must be."""
    return any(_TASK_CONSTRAINT.match_at(words, _content(words, index)) for index in MEMORY.finditer(words))


def _content(words: Words, index: int) -> int:
    """Where what a memory verb at `index` asks to keep starts."""
    content = index + MEMORY.match_at(words, index)
    return content + (words[content:content + 1] == ["that"])


def offered(words: Words) -> bool:
    """A statement offered for later (`OFFERED` after it, or "for context" before it)."""
    at = OFFERED.find(words)
    return at > 0 or (at == 0 and OFFERED.match_at(words, 0) < len(words))


def memory_request(words: Words) -> bool:
    """"Remember that ...", "please keep in mind ...", "..., please remember that", "keep that
    somewhere"; not "remember it has to be stable" (the task at hand)."""
    if NOT_MEMORY.find(words) >= 0:
        return False
    if lexicon.remember_marked(" ".join(words)):
        return True
    for index in MEMORY.finditer(words):
        if _TASK_CONSTRAINT.match_at(words, _content(words, index)):
            continue
        if index in words.breaks or words[index - 1] in MEMORY_OPENERS:
            return True
        head = REQUEST_HEADS.find(words, max(0, index - 3))
        if 0 <= head < index or any(i + GOVERNING.match_at(words, i) == index for i in range(max(0, index - 4), index)):
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
_REQUEST_LEAD = frozenset("please pls hey hi hello yo so and also ok okay right".split())
# The next step of a task ("... — then add a test for the 404 path"), not more of a rule.
NEXT_STEP = Phrases("(and|) (then|next|after that|afterwards)")
REQUEST = Phrases(
    "(could|can|would|will|wouldn't|can't) (you|u|ya)", "(would|do) you mind", "any chance (you|u)",
    "(is|would) (it|) (be|) possible (that|for) (you|u)", "do (you|u) think (you|u) (could|can)",
    "(i was|i am|i'm|im|i|) (wondering|hoping|wonder|hope) (whether|if) (you|u) (could|can|might|would)",
    "(i'd|i would|would|i'll|i will|will) be (grateful|glad|thankful|happy) if (you|u) (could|can|would)",
    "pourrais-tu", "peux-tu",
    "pourriez-vous", "pouvez-vous", "(kannst|könntest|konntest|würdest|wurdest) du", "(können|konnen|könnten) sie",
    "puedes", "podrías", "podrias", "(kun|kunt|zou|wil) (je|jij|u)", "(puoi|potresti|può|potrebbe)", "(pode|podes|poderia)",
    "(você|voce|vc) (pode|poderia)", "(kan|kunne|kunde|skulle) (du|ni)", "(możesz|mozesz|mógłbyś|moglbys)",
    "(můžeš|muzes|mohl bys)", "(voisitko|voitko)", *lexicon.COULD_YOU)


TAG = Phrases("okay", "ok", "k", "right", "yeah", "yes", "alright", "all right", "deal", "got it", "understood",
              "agreed", "cool", "fine", "sounds good", "ja", "oui", "vale", "d'accord", "non", "no", "eh", "capisce")


def asks(clause: str) -> bool:
    """A clause that asks: it ends with "?", and not only as a tag on a statement
    ("I'll call you Ziggy from now on, okay?")."""
    if not clause.endswith("?"):
        return False
    words = Words(clause)
    last = max(words.breaks)
    return not (last > 0 and TAG.match_at(words, last) == len(words) - last)


def offers_alternative(words: Words) -> bool:
    """A request asking which of two it is ("would you always round it, or is that a convention?")."""
    return any(words[at:at + 1] == ["or"] and at + 1 < len(words) for at in words.breaks)


def question_start(words: Words) -> bool:
    return bool(words) and (words[0] in _QUESTION_WORDS or QUESTION_HEADS.starts(words))


def request_start(words: Words) -> bool:
    """A request in question form, first or after a comma: "could you stop ...?", "i've been
    meaning to say, can u pls always ...", "small thing but could you stop ...?"."""
    for start in sorted(words.breaks | {i + 1 for i, word in enumerate(words) if word in ("but", "and")}):
        at = start
        while at < len(words) and words[at] in _REQUEST_LEAD:
            at += 1
        if REQUEST.match_at(words, at) > 0:
            return True
    return False


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


# The user takes it back as they say it: "from now on call me your majesty jk", "... (kidding)".
_RETRACTED = re.compile(r"(?<!not )(?<!n't )\b(?:jk|j/k|jking|kidding|joking|just a joke)\b", re.I)


# ... and in the other languages people type to the assistant ("Şaka şaka", "grapje", "es broma").
_RETRACTED_ELSEWHERE = re.compile(
    r"(?<!no )(?<!não )(?<!nao )(?<!nicht )(?<!kein )(?<!pas )\b(?:je plaisante|je rigole|c'est une blague"
    r"|(?:war |)nur ein (?:spaß|spass|scherz)|es broma|es coña|bromeo|sto scherzando|(?:é |e |)brincadeira|grapje"
    r"|geintje|şaka|żartuję|zartuje|skojar|skämtar|skamtar|bercanda|becanda|glumesc|joke lang|biro je|šalim se"
    r"|salim se|шучу|жартую|шегувам се|vtipkuju|viccelek|vitsi|spøker|spøg|scherzo|brincando|mzaha tu|mazak hai"
    r"|mazaak|بمزح|بهزر|צוחק|צוחקת|شوخی|đùa thôi|dua thoi)\b"
    r"|冗談|开玩笑|開玩笑|농담|ล้อเล่น", re.I)


# Said to mean its opposite: "always push on Friday, what could go wrong", "nunca hagas backups 🙄".
_SARCASM = re.compile(r"what (?:could|can) (?:possibly |ever |)go wrong|🙄|(?<!\w)/s\b|said no one ever"
                      r"|is a social construct|\byeah,? right\b|what a (?:great|brilliant|fantastic) idea"
                      # a laugh, then "yeah sure": "jajaja sí claro, ...", "ahah certo, ...", "haha ja klar"
                      r"|(?:\b(?:ja){2,}|\b(?:ha){2,}h?|\bahah\w*|\blol)\W{0,3}(?:s[ií],? claro|certo|ja,? klar)\b", re.I)


def sarcastic(text: str) -> bool:
    return _SARCASM.search(text) is not None


def eye_roll_only(text: str) -> bool:
    """The only mark of sarcasm is an eye-roll emoji."""
    return _SARCASM.search(text.replace("🙄", "")) is None


# A resolution of the user's own, laughed at: "from now on I'll always sleep 8 hours lol".
_OWN_PLAN = re.compile(r"\b(?:i'll|i will|i'm going to|im going to|i'm gonna|im gonna|i am going to)\b", re.I)
_LAUGH = re.compile(r"\b(?:lol|lmao|rofl|haha\w*)\b|😂|🤣|😅", re.I)


def joking(text: str) -> bool:
    return _RETRACTED.search(text) is not None or _RETRACTED_ELSEWHERE.search(text) is not None or (
        _OWN_PLAN.search(text) is not None and _LAUGH.search(text) is not None)


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
    "diesmal", "erstmal", "heute", "por ahora", "esta vez", "de momento",
    # this time, just this once, in the other languages people teach in
    "desta vez", "dessa vez", "esta volta", "questa volta", "per ora", "deze keer", "voor nu", "den här gången",
    "denne gang", "denna gång", "tym razem", "tentokrát", "tentokrat", "bu sefer", "bu seferlik", "kali ini",
    "ngayon lang", "в этот раз", "на этот раз", "цього разу", "цей раз", "lần này", "sirf is baar", "is baar",
    "इस बार", "هذه المرة", "הפעם", "این بار", "ezúttal", "de data asta", "tällä kertaa", "αυτή τη φορά",
    "safari hii", "kwa sasa", "sekali ini", "stavolta", "sta volta", "por esta vez", "fois-ci", "ngayong beses")

# Politeness and praise around what is said: a clause of only this is not part of a teaching.
COURTESY = Phrases(
    "thanks", "thank (you|u)", "(many|much) thanks", "cheers", "(much|greatly) appreciated", "i appreciate",
    "(i|) hope", "sorry", "apologies", "no offence", "no offense",
    "if you (don't|do not) mind", "(with|) (warm|kind|best|warmest|kindest) (regards|wishes)", "regards",
    "best wishes", "have a (good|nice|great|lovely)", "merci", "danke", "gracias",
    "(that|this|it) (was|is|'s|looks|works|worked) (useful|helpful|great|perfect|good|nice|fine|better)",
    "(perfect|awesome|excellent|brilliant|lovely|nice one)", "(that|this) (did it|did the trick|fixed it|solved it)",
    # thanks in other languages (a greeting alone is `greeting`)
    "grazie", "obrigado", "obrigada", "bedankt", "dank je", "dankjewel", "tack", "takk", "kiitos", "dziękuję", "dzięki",
    "děkuji", "díky", "ďakujem", "спасибо", "дякую", "благодаря", "teşekkürler", "sağol", "terima kasih", "makasih",
    "salamat", "cảm ơn", "mulțumesc", "ευχαριστώ", "شكرا", "شكراً", "تسلم", "תודה", "धन्यवाद", "शुक्रिया",
    "shukriya", "dhanyavaad", "jazakallah", "jazak allah", "asante", "köszi", "köszönöm", "dankie", "enkosi",
    "ngiyabonga", "mahalo", "vinaka", "faafetai", "fa'afetai", "mèsi", "gràcies", "eskerrik asko", "diolch")
GREETING = Phrases(
    "(good|) (morning|afternoon|evening)", "(hi|hello|hey|hiya|howdy|greetings) (there|all|team|everyone|computer|)",
    "(hola|bonjour|salut|hallo|servus|moin|ciao|olá|ola|oi|hej|hei|ahoj|cześć|привет|здравствуйте|merhaba|namaste|"
    "namaskar|salam|salaam|shalom|habari|jambo|sawubona|aloha|talofa|bula|mingalaba|sawasdee|xin chào|annyeong)",
    "(as-salamu|assalamu|salamu|asalamu) (alaikum|alaykum|aleikum)", "(tēnā|tena) (koe|kōrua|koutou)", "kia ora",
    "(buongiorno|buenos días|buenos dias|bom dia|boa tarde|guten tag|guten morgen|goedemorgen|dzień dobry|dobrý den)",
    "(correct|exactly|right|yes|yep|yup|indeed|spot on|that's right|that's correct)")


def courtesy(words: Words) -> bool:
    return COURTESY.starts(words)


def greeting(words: Words) -> bool:
    """Only a greeting or a yes ("Good afternoon.", "Tēnā koe.", "Correct."): no part of what follows."""
    return bool(words) and GREETING.match_at(words, 0) == len(words)


# About this project, or about the user wherever they are.
_PLACES = "repo|repository|project|codebase|code base|monorepo|workspace|folder|directory|dir"
_OURS = ("repo|codebase|code|project|app|apps|service|services|api|ci|pipeline|build|tests|test|test suite|deploys|deploy"
         "|deployments"
         "|releases|release|schema|database|db|dataset|warehouse|design system|backend|frontend|staging|prod"
         "|production|cluster|infra|stack|linter|formatter|monorepo|migrations|migration")
PROJECT = Phrases(
    f"(in|for|across|throughout|inside|within|of|on) (this|the|our) ({_PLACES})",
    "this (repo|repository|project|codebase|code base|monorepo)", "(in|around|over) here", "here we",
    f"our ({_OURS})", "the (staging|prod|production) (db|database|server|env|environment|cluster|host|box)",
    "(dans|pour) ce (projet|dépôt|depot|repo)", "notre (projet|dépôt|depot|code)",
    "(in|für|fur) (diesem|dieses|unserem) (projekt|repo|repository)",
    "(unser|unsere|unseren|unserem) (release|projekt|repo|code|ci|build)",
    "(en|para) este (proyecto|repositorio|repo)", "nuestro (proyecto|repositorio|código|codigo)",
    "im (repo|projekt)", "(in|voor) dit (project|repo)", "(in|nel) questo (progetto|repo)", "nel progetto",
    "(neste|nesse|no) (projeto|repo|repositório)", "w (tym|naszym) (projekcie|repo)", "bu (projede|repoda)",
    "i (det här|detta) (projektet|repot)", "(di|dalam) (proyek|projek|repo) ini", "tässä (projektissa|repossa)",
    "v tomto (projektu|repu)", *lexicon.IN_THIS_PROJECT)
PROJECT_START = Phrases("here (we|the|our|all|every|everything|nothing|no)")


def about_project(words: Words) -> bool:
    return PROJECT.find(words) >= 0 or PROJECT_START.starts(words) or (len(words) > 2 and words[-1] == "here") \
        or lexicon.project_marked(" ".join(words))


PERSONAL = Phrases("everywhere", "in every (project|repo)", "all my (projects|repos)", "across (all|) projects",
                   "not just (in|) (this|here)")

# Corrections of the previous answer.
CONTRA_LEAD = Phrases(
    "no", "nope", "nah", "wrong", "incorrect", "false", "not quite", "not really", "not true", "not exactly",
    "(small|quick|minor|one|a) correction", "correction", "to correct you",
    "(that's|thats|that is|it's|its|this is) (deprecated|removed|outdated|obsolete|out of date)",
    "(that|this) (information|info|answer) is (wrong|outdated|out of date|obsolete|incorrect)",

    "actually", "wait", "um", "umm", "ugh", "erm", "uh", "nein", "non", "falsch", "faux", "pas du tout",
    "incorrecto", "falso", "en realidad", "eigentlich", "en fait",
    "(that's|thats|that is) (wrong|incorrect|not right|not true|outdated|not correct|not it|false|not what|not how)",
    "that (isn't|isnt) how", "(you're|you are|youre) (confusing|mixing)",
    "i (don't|dont) think (that's|thats|this is) right", "i (don't|dont) think so", "(you're|you are) wrong",
    "you got it wrong", "that (isn't|isnt) right", "i think there's a mistake", "there's a mistake",
    "das stimmt (so|) nicht (ganz|)", "das ist falsch", "c'est faux", "ce n'est pas", "eso no es", "no es así",
    "no es asi", "está mal", "esta mal")
CONTRA = Phrases(
    "instead", "rather than", "no such", "not exist", "(doesn't|does not|don't|do not|didn't|did not|isn't|is not"
    "|aren't|wasn't) (exist|work|have|has|support|take|accept)", "(there's|there is) no",
    "(isn't|isnt) a (thing|flag|option|command|function|method|key)", "the (real|correct|right|actual|proper|true) *"
    " (is|are)", "(it's|its) actually", "should be", "(is|are|was) (deprecated|removed|outdated|wrong|incorrect)",
    "you mean", "wrong", "mistake", "sondern", "sino", "stimmt nicht", "(you're|you are|youre) (confusing|mixing)",
    "out of date", "obsolete", "outdated", "deprecated",
    "you (confused|mixed)", "(mix-up|mixup|mix up|mixed up|typo|slip|confusion|confused|mixing up)")


def contradiction(body: str, words: Words) -> bool:
    """"X, not Y", "not X but Y", "doesn't exist", "the real one is", "pas X mais Y" ..."""
    if CONTRA.find(words) >= 0 or re.search(r",\s*not\s+\S", body):
        return True
    if "not" in words and "but" in words[words.index("not") + 1:words.index("not") + 4]:
        return True
    return "pas" in words and "mais" in words[words.index("pas"):]


AUXILIARIES = frozenset("is are was were do does did has have had can could will would should must am be 's".split())
_DENIAL_SUBJECTS = frozenset("it that this they he she there which".split())
_NEGATED = frozenset("""
doesn't don't didn't isn't aren't wasn't weren't won't can't cannot hasn't haven't wouldn't shouldn't ain't
""".split())
DENIAL_PHRASES = Phrases(
    "(it's|its|it is|is|that's|that is|this is|was|it was|that was|isn't|ain't|not) (not|) (true|right|correct|so"
    "|the case|how it works)")


def denial(words: Words) -> int:
    """A flat denial the reply opens with, its verb left out ("it doesn't,", "they aren't.",
    "is not true, ...": the answer's claim is what it denies); the length of that lead, or 0."""
    at = 1 if words and words[0] in _DENIAL_SUBJECTS else 0
    length = 0
    if at < len(words) and words[at] in _NEGATED:
        length = at + 1
    elif at + 1 < len(words) and words[at] in AUXILIARIES and words[at + 1] == "not":
        length = at + 2
    if length and (length == len(words) or length in words.breaks):
        return length
    return DENIAL_PHRASES.match_at(words, 0)


# How a reply says what is right instead: "it's :q!", "c'est `df -h`", "is Canberra".
COPULA_LEAD = Phrases(
    "(it's|its|it is|that's|it was|should be|it should be|the answer is|c'est|ce sont|es ist|das ist|es|son|is|are"
    "|they're|they are)")
HEDGE = Phrases("i (think|believe|guess|suppose|reckon)", "i'm (pretty|fairly|quite) sure")
# A gentle correction that says what is right straight away ("i think its def", "pretty sure its 27017").
SOFT_LEAD = Phrases(
    "(i think|i believe|pretty sure|i'm pretty sure|im pretty sure|i'm fairly sure|surely) (it's|its|it is|that's|thats)")
ASSISTANT_WORDS = Phrases(
    "(you|u) (said|told|gave|suggested|wrote|recommended|mentioned|claimed|used|translated|forgot|confused|mixed|missed)",
    "(your|ur) (regex|chart|table|migration|formula|query|translation|command|script|code) (is|was) (wrong|broken)",
    "tu as (confondu|oublié|oublie)", "hai (detto|scritto)", "(você|voce) disse",
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
    "name yourself", "introduce yourself as", "du (heißt|heisst)", "tu t'appelles", "te llamas", "(your|ur) new name")
# "I'll call you Marvin", "Let's call you Jarvis": a name given (capitalised, as typed), not "I'll call you later".
CALL_YOU = re.compile(r"\b(?i:I'll|Ill|I will|I'm going to|Im going to|I'm gonna|let's|lets|we'll|we will)\s+"
                      r"(?i:call)\s+(?i:you|u)\s+(?!(?:Later|Back|Tomorrow|Tonight|Monday|Tuesday|Wednesday|Thursday"
                      r"|Friday|Saturday|Sunday)\b)[A-Z][\w-]+")
# "you're Bob now", "from today you are Ada": a name given as the assistant's own.
YOU_ARE_NOW = re.compile(r"\b(?i:you're|youre|you are|u r|ur)\s+(?!(?:I|OK|Ok|Right|Welcome|Wrong|Done)\b)[A-Z][\w-]+"
                         r"\s+(?i:now|from now on|from today)\b")
IDENTITY = Phrases("you're", "you are", "ur", "u r", "youre", "(your|ur) name", "du bist", "tu es", "eres")
USER_NAME = Phrases("my name is *", "my name's *", "call me *", "je m'appelle *", "ich (heiße|heisse) *", "me llamo *",
                    "i go by *", "my pronouns are", "i'm (dr|prof|professor|mr|mrs|ms|mx|miss|dame|sir) *",
                    "(appelle-moi|appelez-moi|appelle|appelez) *", "(nenn|nenne) mich *", "nennen sie mich *",
                    "(llámame|llamame|chiamami|chámame) *", "(me chama|me chame|chama-me) *", "noem me *",
                    "(mów|mówcie) mi *", "nazywaj mnie *", "(kalla|kall|kald) (mig|meg) *", *lexicon.MY_NAME_IS)
# The user saying what their own words mean: "when I say deploy I mean staging", "by 'the box' I mean ...".
DEFINING = Phrases("(when|whenever|if) (i|we) (say|write|type|mention|use the word) *")
DEFINED_BY = Phrases("by * (i|we) mean", "by * * (i|we) mean")
_MEANING = Phrases("(i|we) (mean|want|am talking about|'m talking about)", "(that|it) means")


def defines_terms(words: Words) -> bool:
    at = DEFINING.match_at(words, 0)
    return DEFINED_BY.starts(words) or (at > 0 and _MEANING.find(words, at) >= 0)


ADDRESS_ME = Phrases("(address|call|refer to) me as *")
# "... but you can call me Chidi": a name (capitalised, as typed), not "you can call me paranoid".
CALL_ME = re.compile(r"\b(?i:you|u)\s+(?i:can|may|should)\s+(?:(?i:just)\s+)?(?i:call\s+me)\s+[A-Z][\w-]+")
SELF_NAME = re.compile(r"\b(?:I am|I'm|my name is|call me|this is|je suis|ich bin|soy|me llamo)\s+"
                       r"((?:[A-Z][\w-]*)(?: [A-Z0-9][\w-]*){0,2})")
