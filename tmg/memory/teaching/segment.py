"""The user's own voice in what they typed: clauses outside code, logs, quotes and pasted material.

What the user typed may hold far more than their own words: a fenced snippet, a log excerpt, a
colleague's note pasted under "here's what Bob sent", a sentence to translate after "Translate:".
None of that is the user speaking to the assistant, so none of it may teach. What is left is cut
into sentences, and sentences into clauses (at `;`, `, and`, `, but`, a spaced dash), each kept as
a span of the typed text (a statement is always the user's own words) with a masked copy for the
cues: lower-cased, quoted text and code spans replaced by placeholders, so a "from now on" inside
quotes or backticks counts for nothing while `Always sign with 'Cheers'` keeps its quote.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tmg.memory.teaching.forms import memory_request
from tmg.memory.teaching.phrases import Words

QUOTE, CODE = "‹q›", "‹c›"

_FENCE = re.compile(r"^\s*(```|~~~)")
_LOG_LINE = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}"
    r"|(?:[\w./@-]+\s+){0,2}(?:INFO|WARN|WARNING|ERROR|ERR!|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\b"
    r"|Traceback \(most recent|File \"|at [\w.$<>]+\(|npm ERR!|[\w./-]+:\d+:|\w+(?:Error|Exception):\s"
    r"|(?i:warning|error|caution|deprecated|danger|fatal|exception|panic)\s*[:!]"
    r"|\[?\d{1,2}:\d{2}\]?\s+(?:@[\w.-]+|<[\w.-]+>|(?:[\w.-]+ ){0,2}[\w.-]+:\s)"
    r"|\[[^\W\d_][\w.-]{0,20}(?: [\w.-]{1,20})?\]\s+\S)")  # a chat log: "09:05 @dana: ...", "[08:15] Tío Beto: ...", "[amit] ..."
_CODE_LINE = re.compile(
    r"^(?:\s{4,}\S|\t|\s*(?:\$ |>>> |# |// |/\*|\*/|#!|#include\b|@\w+\(|<\w+[ >/])"
    r"|\s*(?:def|class|func|fn|function|import|package|public|private|async def)\s+[\w(]"
    r"|\s*from\s+[\w.]+\s+import\b|\s*(?:const|let|var)\s+\w+\s*=|\s*[A-Z][A-Z0-9_]{2,}=\S"
    r"|\s*(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER)\s[A-Z*(]"
    r"|.*(?:[{}]|(?<![\u0370-\u03ff\u1f00-\u1fff]);)\s*$|\s*[}\])]+[,;]?\s*$|\s*-\s+[\w.-]+:\s|\s*[\w.-]+:\s*(?:true|false|null|yes|no|\d+)\s*$)")
# Words before a colon, with nothing of code in them, that open a line ending in code.
_PROSE_LEAD = re.compile(r"[^\W\d][^`{}();=<>$]*?[^\W\d]{2}:(?= \S)")
_QUOTED = re.compile(r"\"[^\"\n]{2,}\"|“[^”\n]{2,}”|«[^»\n]{2,}»|„[^“”\n]{2,}[“”]|”[^”\n]{2,}”|「[^」\n]+」|『[^』\n]+』"
                     r"|(?<![\w'])'[^'\n]{2,}?'(?![\w'])")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
# Question marks other than "?": Greek asks with ";" (or its own U+037E: "Μπορείς να μου
# προτείνεις ...;" is a question, not code), Arabic and Persian with "؟", Chinese and Japanese
# with "？", Amharic with "፧".
_OTHER_QUESTION = re.compile("(?<=[\u0370-\u03ff\u1f00-\u1fff]);|[\u037e\u061f\uff1f\u1367]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
# Sentence ends: . ! ? … followed by space, not after a common abbreviation or a lone initial; the
# full stops of scripts that have their own (。！？, the danda ।, Khmer ។, Ethiopic ።, Myanmar ။,
# Urdu ۔, Armenian ։), which need no space after them.
_SENTENCE_END = re.compile(r"(?<=[.!?…؟])[\"')\]]*\s+|(?<=[。！？।॥។።፧။۔։])[\"')\]」』”]*\s*")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|mr|mrs|ms|mx|dr|prof|st|sr|jr|rev|hon|mme|mlle|hr|frau"
                           r"|z\.b|p\.ej)|\b[A-Za-z])\.$",
)
# Clause joints inside a sentence: the parts either side can carry different things (a password,
# then ", and from now on ...", ", also please always ..."). After a Cyrillic word a dash is the
# copula ("столица Австралии — Канберра"), no joint.
_CLAUSE_JOINT = re.compile(r"\s*;\s+|,\s+(?:and|but|also|plus|und|aber|et|mais|y|pero)\s+|(?<![\u0400-\u04ff])\s+[—–-]{1,2}\s+")
_DASH = re.compile(r"\s+[—–-]{1,2}\s+")
# A line that introduces material to work on: "Translate into French: ...", "here's the log:",
# "Bob wrote: ...". Its task word must be its verb (at its start), not any word in it.
_TASK_VERBS = frozenset("""
translate proofread summarise summarize rewrite rephrase paraphrase reword fix correct review check explain reply
respond answer shorten improve edit format convert decode parse analyse analyze debug tidy polish simplify spellcheck
spell-check read draft turn traduis corrige résume übersetze korrigiere fasse traduce resume
traduci traduz traduza vertaal översätt oversæt oversett käännä przetłumacz przetlumacz переведи переведите переклади
çevir terjemahkan dịch μετάφρασε isalin tafsiri ترجم תתרגם תרגם ترجمه fordítsd přelož prelož tõlgi
""".split())
_LEAD_OPENERS = frozenset("ok okay so now hey hi please pls plz kindly can could would will you u ya".split())
_THESE = frozenset("this these that it following text sentence paragraph email message note".split())
_MATERIAL_NOUNS = frozenset("""
note email e-mail mail message thread text letter post comment review memo announcement doc document paragraph
snippet log output file notice chat slack reply ticket issue policy notes emails messages logs files
""".split())
_POINTERS = frozenset("this following below attached here's".split())
_SPEECH = frozenset("sent wrote writes said says posted replied left forwarded forwarding fwd".split())
_OWN = frozenset("i we you u".split())


def _lead_words(text: str) -> list[str]:
    return [w.strip(",.;:!?()\"'“”") for w in text.lower().replace("’", "'").split()]


# Kinds of text someone asks the assistant to write for others: what follows is their content.
TEXT_KINDS = frozenset("""
reminder message note email mail letter sign poster notice announcement post tweet memo text reply prompt story
poem slogan caption description summary readme policy checklist guideline guidelines invitation invite card speech
toast bio flyer banner newsletter rules list faq script ad advert listing sms whatsapp agreement charter handbook
bullets clause menu listino preisliste tarifs mejl e-mail brief lettre carta lettera bericht nachricht mensaje messaggio mensagem meddelande besked viesti
wiadomość wiadomosc сообщение письмо лист повідомлення mesaj pesan surat μήνυμα ujumbe barua संदेश رسالة הודעה מכתב
پیام üzenet zpráva sõnum correo schild cartel letrero cartello affiche panneau aviso avviso avis hinweis aushang
mitteilung anuncio comunicado comunicato circolare circular rundschreiben notis ilmoitus ogłoszenie объявление
оголошення duyuru pengumuman ανακοίνωση tangazo सूचना إعلان שלט اطلاعیه skylt skilt kyltti tabliczka табличка
вывеска plakat плакат cartaz reglas règles regeln regole regras regels regler säännöt zasady правила kurallar aturan
κανόνες sheria नियम قواعد כללים lista liste lijst список guion guión skrip
""".split())
_PRODUCE = frozenset("""
write draft compose create make prepare produce generate design type put
écris écrivez rédige rédigez schreib schreibe verfasse escribe escríbeme redacta scrivi scrivimi redigi escreve
escreva redige schrijf skriv kirjoita napisz напиши напишите напишіть склади складіть yaz tulis tuliskan buatkan
viết soạn γράψε γράψτε pakisulat isulat sumulat andika लिखो लिखिए اكتب اكتبي اكتبلي תכתוב תכתבי כתוב נסח بنویس
írj írd scrie napiš napište napíš kirjuta parašyk escriu redáctame redactame redáctanos escríbenos escribime hazme
prepárame preparame prepara creami fammi preparami formuliere formulieren formulier formulez erstelle entwirf
""".split())
# A lead that only names what follows as the text's content: "Inhalt: ...", "wording: ...".
_CONTENT = frozenset("""
content contents wording text texto testo tekst contenido contenu conteúdo conteudo inhalt wortlaut inhoud innhold
innehåll sisältö treść obsah содержание текст зміст
""".split())
_POINTED = frozenset("this these it following below".split())


def _introduces_material(lead: str) -> bool:
    """"translate this", "proofread", "here's the log", "the customer wrote", "what Bob sent",
    "optimize this", "write a sign for the office kitchen"."""
    words = [w for w in _lead_words(lead) if w]
    at = 0
    while at < len(words) and words[at] in _LEAD_OPENERS:
        at += 1
    if words[at:at + 2] in (["help", "me"], ["help", "us"]):
        at += 3 if words[at + 2:at + 3] == ["to"] else 2  # "please help me draft an announcement: ..."
    if words[at:] and set(words[at:]) <= _CONTENT:
        return True
    if at < len(words) and (words[at] in _TASK_VERBS or words[at:at + 2] in (["clean", "up"], ["look", "at"])):
        return True
    if words and words[-1] in _POINTED and len(words) - at <= 4 and not _keeps(lead):
        return True  # "<any verb> this:" ("optimize this:", "thoughts on this:"), not "remember this:"
    if at < len(words) and words[at] in _PRODUCE and any(w in TEXT_KINDS for w in words[at + 1:at + 5]):
        return True
    for index, word in enumerate(words):
        if word in _TASK_VERBS and words[index + 1:index + 2] and words[index + 1] in _THESE:
            return True
        if word in ("here's", "below") or words[index:index + 2] in (["here", "is"], ["here", "are"], ["as", "follows"]):
            return True
        if words[index:index + 2] in (["this", "is"], ["these", "are"]) and (
                any(w in _MATERIAL_NOUNS for w in words[index + 2:index + 5]) or words[index + 2:index + 3] == ["what"]):
            return True  # "this is the log:", "this is what I got:", not "this is a tangent, but:"
        if words[index:index + 2] == ["the", "following"]:
            return True
        if word in _SPEECH and (index > 0 and words[index - 1] not in _OWN or word.startswith(("forward", "fwd"))):
            return True
    return False


def _keeps(lead: str) -> bool:
    return memory_request(Words(mask(lead)))


def _refers_to_material(text: str) -> bool:
    """"this note from my manager", "here is the email", "what our VP sent"."""
    words = [w for w in _lead_words(text) if w]
    for index, word in enumerate(words):
        if word in _POINTERS or words[index:index + 2] == ["here", "is"]:
            if any(w in _MATERIAL_NOUNS for w in words[index + 1:index + 4]):
                return True
        if word == "what" and any(w in ("sent", "wrote", "said", "posted") for w in words[index + 1:index + 5]):
            return True
    return False


_GREETING = re.compile(r"^\s*(?:(?:hi|hello|hey|dear|bonjour|salut|hallo|liebe|hola|buenas)\b[\w ]{0,20}[,:!—–-]"
                       r"|(?:team|folks|everyone|all)\s*[,:!—–-])")
_SIGNATURE = re.compile(r"^\s*(?:[—–-]{1,2}\s*[a-z][\w.]*|(?:thanks|thank you|best|cheers|regards|br|merci|danke"
                        r"|gracias|saludos)[,!.]?\s+[a-z][\w.]*\.?)\s*$")
# The patterns above run on lower-cased text (IGNORECASE makes compiling them several times slower).


class Clause(NamedTuple):
    """One clause of the user's own voice."""

    start: int  # span in the typed text: `typed[start:end]` is the clause in the user's words
    end: int
    masked: str  # lower-cased, quotes -> ‹q›, code spans -> ‹c›, for the cues
    sentence: int  # which sentence of the typed text it belongs to
    paragraph: int


def user_clauses(typed: str) -> list[Clause]:
    """The clauses of `typed` that are the user's own voice, in order."""
    clauses: list[Clause] = []
    sentence = 0
    for paragraph, (start, end) in enumerate(_voice_spans(typed)):
        for s_start, s_end in _sentences(typed, start, end):
            for c_start, c_end, read in _clauses(typed, s_start, s_end):
                clauses.append(Clause(c_start, c_end, mask(read), sentence, paragraph))
            sentence += 1
    return clauses


def mask(text: str) -> str:
    """Lower-cased, typographic apostrophes made plain, code spans and quotations replaced."""
    text = _BULLET.sub("", _OTHER_QUESTION.sub("?", text.replace("’", "'").replace("‘", "'")))
    text = _CODE_SPAN.sub(f" {CODE} ", text)
    text = _QUOTED.sub(f" {QUOTE} ", text)
    return " ".join(text.lower().split())


def _voice_spans(typed: str) -> list[tuple[int, int]]:
    """Spans of the user's own voice: one per paragraph, lines of code, logs, quotes and the
    material after a lead-in left out."""
    spans: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []  # the lines of the paragraph being read
    fence = False
    material = False  # everything from here on was introduced as material to work on
    refers = False  # the last paragraph pointed at material ("this note from my manager")
    offset = 0
    lines = typed.splitlines(keepends=True)
    paragraphs: list[list[tuple[int, int]]] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        begin, offset = offset, offset + len(raw)
        if _FENCE.match(line):
            fence = not fence
            if current:
                paragraphs.append(current)
                current = []
            if not fence and material:
                material = False  # a fence was the material; the user speaks again after it
            continue
        if fence or material:
            continue
        if not line.strip():
            if current:
                paragraphs.append(current)
                current = []
            continue
        if line.lstrip().startswith(">") or _LOG_LINE.match(line):
            continue
        if _CODE_LINE.match(line):
            prose = _PROSE_LEAD.match(line)  # "thats svelte 4. svelte 5 uses runes: let count = $state(0);"
            if prose:
                current.append((begin, begin + prose.end()))
            continue
        lead_end = _material_lead(line)
        if lead_end is not None:
            current.append((begin, begin + lead_end))
            material = True
            continue
        current.append((begin, begin + len(line)))
    if current:
        paragraphs.append(current)
    for index, paragraph in enumerate(paragraphs):
        first = typed[paragraph[0][0]:paragraph[0][1]].lower()
        last = typed[paragraph[-1][0]:paragraph[-1][1]].lower()
        letter = index > 0 and (_GREETING.match(first) is not None or _SIGNATURE.match(last) is not None)
        if (refers and index > 0) or letter:
            refers = True  # a pasted note goes on to the end
            continue
        text = " ".join(typed[a:b] for a, b in paragraph).lower()
        refers = _refers_to_material(text)
        for span in paragraph:
            spans.append(span)
    return spans


def _material_lead(line: str) -> int | None:
    """Where a lead-in that introduces material ends (after its colon), or None."""
    colon = _lead_colon(line)
    if colon is None:
        return None
    lead = line[:colon]
    if set(_lead_words(_LAST_SENTENCE.split(lead)[-1])) <= _ASIDE_OPENERS:
        return None  # "here's the doc, summarise it. also: in this project ...": the user goes on
    parts = {lead, lead.rsplit(",", 1)[-1], _LAST_SENTENCE.split(lead)[-1]}
    if len(lead.split()) > 14 or not any(_introduces_material(part) for part in parts):
        return None  # (its last part alone too: "ok Pip, draft a text to my flatmate:", "... Inhalt:")
    return colon + 1


_LAST_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_ASIDE_OPENERS = frozenset("also btw ps p.s fyi oh and plus nb one more thing separately unrelated".split())


def _lead_colon(line: str) -> int | None:
    """The first colon that ends a lead-in: not in a URL, a time (10:30), a code span or a quote."""
    depth_code = False
    for index, char in enumerate(line):
        if char == "`":
            depth_code = not depth_code
        elif char in "\"“«" and not depth_code:
            return None  # a quotation before any colon: no lead-in to speak of
        elif char == ":" and not depth_code:
            after = line[index + 1:index + 2]
            before = line[index - 1:index] if index else ""
            if after == "/" or (before.isdigit() and after.isdigit()):
                continue
            return index
    return None


def _sentences(typed: str, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    cursor = start
    quoted = [m.span() for m in _QUOTED.finditer(typed, start, end)]
    for match in _SENTENCE_END.finditer(typed, start, end):
        head = typed[cursor:match.start()]
        if _ABBREVIATION.search(head[-8:].lower()) or any(a < match.start() - 1 < b - 1 for a, b in quoted):
            continue  # ("never say 'Great question!' again": a quotation's end is not the sentence's)
        out.append((cursor, match.start() + len(match.group(0).rstrip())))  # with its closing quote
        cursor = match.end()
    out.append((cursor, end))
    return [(a, b) for a, b in (_strip(typed, a, b) for a, b in out) if b > a]


# A clause cannot end on these: a dash after one opens an aside in the middle of the clause.
_DANGLING = frozenset("whether that if to the a an and but or of you i we my your please could would can will should"
                      " might may".split())


def _clauses(typed: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """Each clause's span and its text for the cues: without an aside between dashes in its middle
    ("I was wondering whether — if it's at all possible — you might ..." is one clause, read as
    "I was wondering whether you might ...")."""
    out = []
    cursor = start
    asides: list[tuple[int, int]] = []
    for match in _CLAUSE_JOINT.finditer(typed, start, end):
        if (asides and match.start() < asides[-1][1]) or _inside_quote_or_code(typed, start, match.start()):
            continue
        if _DASH.fullmatch(match.group(0)) and _DANGLING & set(_lead_words(typed[cursor:match.start()])[-1:]):
            closing = _DASH.search(typed, match.end(), end)
            if closing:
                asides.append((match.start(), closing.end()))
                continue
        out.append((cursor, match.start(), asides))
        cursor, asides = match.end(), []
    out.append((cursor, end, asides))
    clauses = []
    for a, b, inside in out:
        a, b = _strip(typed, a, b)
        if b > a:
            text, at = [], a
            for aside_start, aside_end in inside:
                text.append(typed[at:aside_start])
                at = aside_end
            clauses.append((a, b, " ".join([*text, typed[at:b]])))
    return clauses


def _inside_quote_or_code(typed: str, start: int, at: int) -> bool:
    before = typed[start:at]
    return before.count("`") % 2 == 1 or before.count('"') % 2 == 1


def _strip(typed: str, start: int, end: int) -> tuple[int, int]:
    while start < end and typed[start].isspace():
        start += 1
    while end > start and typed[end - 1].isspace():
        end -= 1
    return start, end
