"""What the user taught in a prompt they typed: the learning hook's scorer (memory.md §4).

A cheap, local, deterministic reading of the typed text's structure (`segment`: the user's own
voice; `cues`: what marks an instruction, a correction, a fact to keep, and what rules one out;
`judge`: the decision and the words kept). The evidence for it is docs/memory-quality.md.

`might_teach` comes first: a set lookup over the prompt's words that lets through every prompt
any cue could fire on, and the scorer's patterns (tens of milliseconds to compile) are loaded
only for those. Most prompts (questions, tasks) cost a few microseconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from tmg.memory.teaching.phrases import BARE_CONTRACTIONS, FUNCTION_WORDS, SWAP_WORDS, stem

if TYPE_CHECKING:
    from tmg.memory.teaching.judge import Teaching

# Every word some cue needs (its time adverbials, negations, memory verbs, modal requests,
# project nouns, contradiction words, naming words, style verbs, the nouns of "in every answer"),
# in the four languages the cues know, and the Italian, Dutch and Portuguese the corpora hold;
# renames, and always/never/from now on, in languages written without accents as often as not;
# the words of teaching/lexicon.py those languages write in plain ASCII (their always, never, next
# time and please too).
# tests/memory/test_teaching.py checks that every teaching of the corpora's tuning parts passes
# this gate.
MARKERS = frozenset("""
now forward future henceforth hereafter whenever every each always never ever anymore longer default rule general
times today starting rest unless until otherwise further notice
désormais dorénavant partir avenir toujours jamais chaque défaut prochaine
jetzt sofort nun künftig zukünftig zukunft immer nie niemals mal standardmäßig grundsätzlich
ahora adelante futuro siempre nunca jamás jamas vez defecto próxima
don't dont not stop quit cease no avoid skip omit prefer rather keep stick stay quit
nobody nothing none nowhere neither nor mix-up mixup typo
next mean means dr prof professor mr mrs ms mx pronouns know later
n'utilise n'écris ne arrête arrêtez cesse hör höre auf deja para basta kein keine keinen sin
remember memorize memorise note mind record fyi forget save store souviens rappelle retiens oublie garde
merk merke denk denke vergiss behalte notiere recuerda acuérdate cuenta olvides apunta conste
like love want need expect hate stand better should must please pls plz kindly appreciate sure
allergic allergy allergies intolerant intolerance handed lefthanded blind colourblind colorblind diabetic dyslexic
autistic deaf vegan vegetarian pescatarian coeliac celiac epileptic asthmatic pregnant kosher halal wheelchair adhd
dyslexia diabetes epilepsy asthma autism hearing allergique allergisch alergico alergica allergico allergica
linkshandig linkshander zurdo zurda mancino mancina canhoto canhota gaucher gauchere venstrehendt vasenkatinen
leworeczny leworeczna daltonien daltonienne farbenblind daltonico daltonica kleurenblind diabetique diabetiker
diabetico diabetica diabeticus diabeetikko vegetarien vegetarier vegetariano vegetariana vegetarisch vegane veganer
vegano vegana veganist vegaani coeliaque celiaco celiaca sourd sourde taub sordo sorda surdo surda doof kuuro
autiste autist autista autistisch schwanger embarazada incinta gravida zwanger gravid raskaana
bitte favor plaît plait stp svp préfère préfére aimerais voudrais veux dois lieber möchte sollst musst
prefiero quiero gustaría debes tienes
repo repository project codebase monorepo workspace folder directory here our staging prod production
projet dépôt projekt unser unsere unseren proyecto repositorio nuestro notre
nope nah wrong incorrect false actually wait instead real correct right actual proper mistake outdated
deprecated exist exists such said told gave suggested wrote used isn't doesn't didn't aren't wasn't weren't
heads confusing mixing confused mixed address think believe pretty correction date obsolete
advised aware insist refrain gilt arrêter cesser dejar aufhören
nein non falsch faux eigentlich sondern mais sino fait realidad stimmt dijiste
name called yourself you're youre ur call heißt heisst appelles llamas
be answer reply respond answers replies responses réponds antworte responde
answer answers reply replies response responses example examples snippet snippets code script scripts command
commands query queries sql email emails message messages explanation explanations suggestion suggestions output
outputs summary summaries comment comments docs documentation plot plots chart charts diagram diagrams pr prs
function functions component components everything anything whatever
sempre mai d'ora poi ricorda ricordati rispondi rispondimi usa usare preferisco vorrei voglio favore
altijd nooit voortaan vanaf graag onthoud liever gebruik geen antwoord antwoorden
nunca agora lembra lembre lembra-te prefiro quero responde favor não
noem nenn nennen appelle appelez chiamami chama chame llamame mów nazywaj kalla kald kall
teraz zawsze nigdy alltid aldrig altid aldri fremover framover nikdy vzdy aina koskaan asla selalu jangan
sekarang mereu totdeauna
feil ikke salah bukan mitte geen inte nej fel translated forgot missed
adesso daqui diante vervolg fortsattningen odtad odted inainte incolo viitor depannya jatkossa lahtien bundan boyle
ako aku alsjeblieft alstublieft anota anote arbeider arbeite arbejder arbetar asun daima dimenticare dolgozom elke
esqueca felejtsd fiecare gedachten gentileza glem glom hamesha hoon houd humesha husk huwag hver hyva ihag ingat
ingatlah intotdeauna j'habite jag jeg jegyezd jestem jobbar jobber joka jsem kabhi kalimutan kamwe keer kerem kerlek
kerta kripaya kripya kumbuka lagi lavoro leder lembre-se locuiesc lucrez lutfen mieszkam mimi mindenkor mindig minte
mohon molim moro muista muistiin nezapomen niciodata nikad nikada ninafanya ninaishi noteer ole olen oletuksena
padrao pakiusap palagi pamatuj pamietaj pernah piacere pokazde pracuje pracuji prendi presente prosim prosze rakhna
rakho saya seferinde seorang setiap snalla soha sono sou soy standaard suis sunt tafadhali tandaan tengas tenha tenlo
tieni tine tinggal tolong trabajo trabalho travaille tuwing uita unohda unutma usisahau uvek uvijek vagyok vanligen
varje venligst vennligst vergeet vezes vivo volta werk wohne woon yaad zaman zanotuj zapamatuj zapamietaj zapomnij
ich bin naprej odslej prihodnje sada ubuduce ubuduće nadalje mostantol ezentul ngayon kuanzia seterusnya endavant
vandaag aage aaj futuro baar karo karna likho batao dena nipe taarifa wonder conversation chat session thread
nee context case generally normally teach practise practice study studying thesis dissertation phd
gogoratu gogoan ahaztu zapamti upamti zapamtite zaboravi zapomni pozabi zapamataj nezabudni atceries neaizmirsti
atsimink isimink nepamirsk meeles meelde unusta mundu gleyma cuimhnigh cofia anghofio ftakar mend harro sonje
recorda oblidis tingues saxla eslab ranti tuna cheta khumbula xasuuso illoobin onthou
nombre nom chiamo nome naam heet heter hedder nazywam imie jmenuji jmenuju volam nimeni nimi nevem numele numesc
zovem zovi panggil tawagin ime nama namaku pangalan jina izena rera sunana oruko vardas vards
mradi hazina proyektong proyek projek projekt projektben projektu projektet prosjektet proiect proiectul projede
repoda repositorio repozitoriju projeto progetto projecte repositori projektis projekte projekcie repozytorium
akoi alati aldrei allichu alltaf amser atav azafady bepred beti biaha biken biko bonvolu byth chak cxiam dahaki dda
dejjem doim dzese dzose ensi faamolemole fabor fadlan foana fwa gach gbogbo gconai gjithmone gwelwch hech herdem
hergiz hunda iga igba iltimos inoiz isikhathi ixesha janm jeer jekk jowo kali kanunay katoa katru kaua kece kerekere
kerema kerralla keyingi koa kord koyaushe kullum kunagi kurre kuti lain lonke ludzu lutem mandrakariva mara marnaba
mesedez mgbe mochipa nceda ndapota ndicela nekad nekk neniam nesaf neste ngalo ngaso ngicela ngiyacela nguva niekada
niekuomet nigba niile nikoli njalo ntango nunka nyonso olmasa pakisuyo palihug palun plau prasau prossima proxima
qachon qatt rawa razem reizi rhoqo riamh safar salawasna sapa sefere semper sentiasa siku sonke souple susunod taimi
tanpri tansah thoil tidak totjorn toujou tur uair ujao ungalokothi vaxt vedno veigauna vienmer viitoare vinsamlegast
visada visuomet volgende wakati walba wastad weligaa yaushe yeroo zote
feasta amach ymlaen aurrera hemendik framvegis edaspidi turpmak siol odteraz tutje quddiem buyon keyin kadib dambe
yanzu isisiyi ugbu kusukela manje ukususela ngoku zvino manomboka izao sikoyo naianei wiwit saiki sugod karon lepas
kedepannya selanjutnya kounye awor kunanmanta guive ekde heretter
""".split())
_WORDS = re.compile(r"[\w'’]+")
# A reply this short to an answer may correct it with no word of contradiction at all: with a
# number ("It's 12."), code ("len(list). length is javascript") or the answer's own words said
# with another value ("Ursula K. Le Guin wrote it.").
SHORT_REPLY_CHARS = 300
_NAME = re.compile(r"(?<=\w[\s,] )[A-Z][a-z]")  # a capital inside the reply, not its first word
_VALUE = re.compile(r"[`\d«»\"“]|\w[=^()/_+#@~{}<>:.\[\]-]\w|(?<!\S)(?:-{1,2}|:)\w")


def might_teach(typed: str, previous_answer: str = "") -> bool:
    """Whether any cue could fire on `typed`: False means `find_teachings` would find nothing."""
    words = [BARE_CONTRACTIONS.get(w, w) for w in (w.replace("’", "'") for w in _WORDS.findall(typed.lower()))]
    if any(w in MARKERS for w in words):
        return True
    if any(ch.isalpha() and not ch.isascii() for ch in typed):
        return True  # a letter English does not write: a language no list of markers reads; the scorer does
    if not previous_answer or len(typed) > SHORT_REPLY_CHARS or typed.rstrip().endswith("?"):
        return False  # (a question corrects nothing)
    if _VALUE.search(typed) or _NAME.search(typed) or (len(words) <= 3 and any(w in SWAP_WORDS for w in words)):
        return True  # (a word or three may swap one of the answer's: "feet", "Wednesday", "other way round";
        # a name may be the right one: "nee hoor, dat is Middelburg")
    answer = {stem(w) for w in _WORDS.findall(previous_answer[:4000].lower()) if w not in FUNCTION_WORDS}
    return any(stem(w) in answer for w in words if w not in FUNCTION_WORDS)


def find_teachings(typed: str, previous_answer: str = "",
                   project_name: Callable[[str], bool] = lambda _name: False) -> list[Teaching]:
    """What `typed` teaches (see `tmg.memory.teaching.judge.find_teachings`); the scorer is
    loaded only for a prompt that passes `might_teach`."""
    if not might_teach(typed, previous_answer):
        return []
    from tmg.memory.teaching import judge

    return judge.find_teachings(typed, previous_answer, project_name)


def prewarm() -> None:
    """Load the scorer and its learned weights now (a thread, while the user types), so the
    first prompt that teaches does not wait ~40 ms for them before its request."""
    import tmg.memory.teaching.judge  # noqa: F401 - the scorer's modules
    from tmg.memory.teaching import learned

    learned.weights()
