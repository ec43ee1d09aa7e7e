"""The cue words of the languages the cues have no grammar for.

The cues read English closely, and French, German and Spanish well; people also teach in Dutch,
Polish, Hungarian, Greek, Swahili and thirty other languages. Where a word says the same in any
of them (always, please, remember, I am), it is listed here once, so that a rule, or what the
learned reading learned of the English word, carries to "altijd", "tafadhali", "muista" and
"vagyok". Words only: where they stand in a clause is left to the learned reading.
"""

from __future__ import annotations

from tmg.memory.teaching.phrases import Phrases, Words

# Always, never, every time, by default: a signal to the learned reading only.
HABIT_WORDS = (
    "altijd", "nooit", "elke keer", "standaard", "sempre", "mai più", "mai piu", "ogni volta", "di default",
    "toda vez", "todas as vezes", "por padrão", "por padrao", "zawsze", "nigdy", "za każdym razem", "domyślnie",
    "vždy", "vzdy", "nikdy", "pokaždé", "pokazde", "alltid", "aldrig", "altid", "aldri", "varje gång", "hver gang",
    "som standard", "aina", "koskaan", "joka kerta", "oletuksena", "mindig", "soha", "mindenkor",
    "întotdeauna", "intotdeauna", "mereu", "niciodată", "niciodata", "de fiecare dată", "her zaman", "asla",
    "hiçbir zaman", "her seferinde", "varsayılan olarak", "selalu", "jangan pernah", "setiap kali", "lagi", "palagi",
    "tuwing", "daima", "kila mara", "kamwe", "hamesha", "humesha", "kabhi nahi", "kabhi mat", "har baar", "luôn",
    "luôn luôn", "không bao giờ", "mỗi lần", "πάντα", "ποτέ", "κάθε φορά", "всегда", "никогда", "каждый раз",
    "по умолчанию", "завжди", "ніколи", "щоразу", "uvijek", "uvek", "nikad", "nikada", "دائما", "دائماً",
    "أبدا", "أبداً", "תמיד", "לעולם", "همیشه", "هرگز",
    # the Balkans, the Baltic, the North Atlantic, the Celtic languages, the Caucasus, Central Asia
    "увек", "увијек", "никад", "никада", "секогаш", "никогаш", "винаги", "никога", "всеки път", "заўсёды", "ніколі",
    "vedno", "nikoli", "vsakič", "zakaždým", "gjithmonë", "gjithmone", "kurrë", "kurre", "dejjem", "qatt",
    "vienmēr", "vienmer", "nekad", "katru reizi", "visada", "visuomet", "niekada", "niekuomet", "alati",
    "mitte kunagi", "iga kord", "alltaf", "aldrei", "altíð", "ongantíð", "i gcónaí", "i gconai", "riamh", "choíche",
    "gach uair", "bob amser", "bob tro", "wastad", "byth", "an-còmhnaidh", "an còmhnaidh", "gu bràth", "atav",
    "bepred", "biken", "ëmmer", "beti", "inoiz ez", "totjorn", "ĉiam", "cxiam", "neniam",
    "ყოველთვის", "არასოდეს", "ყოველ ჯერზე", "միշտ", "երբեք", "ամեն անգամ", "həmişə", "heç vaxt", "hər dəfə",
    "hemişe", "әрқашан", "үнемі", "ешқашан", "ар дайым", "дайыма", "эч качан", "doim", "har doim", "hech qachon",
    "доим", "ҳар доим", "ҳеч қачон", "үргэлж", "хэзээ ч", "байнга",
    # South Asia
    "हमेशा", "कभी नहीं", "कभी भी", "हर बार", "नेहमी", "कधीही", "सधैं", "कहिल्यै", "সবসময়", "সব সময়", "কখনো",
    "কখনই", "প্রতিবার", "હંમેશા", "ક્યારેય", "ਹਮੇਸ਼ਾ", "ਕਦੇ ਨਹੀਂ", "ہمیشہ", "کبھی نہیں", "ہر بار", "எப்போதும்",
    "எப்பவும்", "ஒருபோதும்", "ఎల్లప్పుడూ", "ఎప్పుడూ", "ಯಾವಾಗಲೂ", "ಎಂದಿಗೂ", "എപ്പോഴും", "ഒരിക്കലും", "හැමවිටම",
    "සැමවිටම", "හැමදාම", "කවදාවත්", "تل", "هیڅکله", "هەمیشە", "هەرگیز", "herdem", "hergiz",
    # Africa, the Arab world's dialects
    "ሁልጊዜ", "ሁሌም", "በፍጹም", "ኩሉ ግዜ", "had iyo jeer", "mar walba", "weligaa", "marnaba", "yeroo hunda",
    "koyaushe", "kullum", "ko da yaushe", "nígbà gbogbo", "nigba gbogbo", "gbogbo igba", "láéláé", "mgbe niile",
    "mgbe ọ bụla", "njalo", "ngaso sonke isikhathi", "ungalokothi", "rhoqo", "ngalo lonke ixesha", "nguva dzose",
    "nguva dzese", "foana", "mandrakariva", "saa su nekk", "ntango nyonso", "siku zote", "دايما", "دايماً",
    "على طول", "كل مرة", "أبدًا", "ديما",
    # Southeast Asia and the Pacific
    "sentiasa", "tidak pernah", "kanunay", "tansah", "salawasna", "i taimi uma", "i ngā wā katoa", "i nga wa katoa",
    "kaua rawa", "ena veigauna kece",
    # the Americas
    "toujou", "pa janm", "chak fwa", "semper", "nunka", "tur biaha", "sapa kuti", "wiñaypaq", "akói", "akoi",
    "mochipa",
    # next time
    "la prossima volta", "na próxima vez", "da próxima vez", "na proxima vez", "nächstes mal", "volgende keer",
    "następnym razem", "příště", "nästa gång", "neste gang", "næste gang", "ensi kerralla", "legközelebb",
    "data viitoare", "bir dahaki sefere", "lain kali", "lần sau", "в следующий раз", "наступного разу",
    "την επόμενη φορά", "sljedeći put", "следећи пут", "sledeći put", "naslednjič", "nākamreiz", "kitą kartą",
    "järgmine kord", "keyingi safar", "келесі жолы", "дараагийн удаа", "अगली बार", "পরের বার", "اگلی بار",
    "அடுத்த முறை", "المرة القادمة", "בפעם הבאה", "دفعه بعد", "sa susunod", "wakati ujao", "y tro nesaf",
    # from now on, where no list of the user's own plans (outlook) reads what follows: a signal, not a rule
    "feasta", "as seo amach", "o hyn ymlaen", "o hyn allan", "hemendik aurrera", "héðan í frá", "framvegis",
    "edaspidi", "nüüdsest", "turpmāk", "turpmak", "nuo šiol", "nuo siol", "odteraz", "napříště", "nadále",
    "tani e tutje", "nga tani e tutje", "minn issa 'l quddiem", "отсега нататък", "занапред", "отсега натаму",
    "од сада", "убудуће", "адгэтуль", "надалей", "ამიერიდან", "այսուհետ", "այսուհետև", "bundan belə",
    "бұдан былай", "осыдан бастап", "bundan buyon", "bundan keyin", "үүнээс хойш", "цаашид", "мындан ары",
    "минбаъд", "اب سے", "آئندہ", "अब से", "आगे से", "এখন থেকে", "এরপর থেকে", "आतापासून", "यापुढे", "अबदेखि",
    "हवेथी", "ਹੁਣ ਤੋਂ", "இனிமேல்", "இனிமே", "ఇకపై", "ఇక నుండి", "ಇನ್ನು ಮುಂದೆ", "ഇനി മുതൽ", "ഇനിമുതൽ",
    "මින් ඉදිරියට", "له دې وروسته", "ከአሁን በኋላ", "ከዛሬ ጀምሮ", "hadda kadib", "mar dambe", "daga yanzu",
    "lati isisiyi lo", "láti ìsinsìnyí lọ", "site ugbu a", "kusukela manje", "ukususela ngoku", "kubva zvino",
    "manomboka izao", "banda sikoyo", "amata nei", "mai i nāianei", "mai i naianei", "wiwit saiki", "sugod karon",
    "mulai hari ini", "lepas ni", "kedepannya", "selanjutnya", "apati kounye a", "depi kounye a", "for di awor",
    "kunanmanta", "ko'ágã guive", "de nun", "ekde nun", "vun elo un", "vo jetzt a", "heretter", "hädanefter",
    "od dziś", "w przyszłości", "na przyszłość", "з гэтага часу")
HABIT = Phrases(*HABIT_WORDS)
# The same in the scripts written without spaces (a clause is one "word" to the cues).
HABIT_CHARS = ("いつも", "常に", "必ず", "毎回", "これから", "今後", "总是", "總是", "一直", "永远", "每次", "以后", "以後", "今后",
               "항상", "앞으로", "매번", "절대", "언제나", "다음부터", "다음에는", "絶対に", "決して", "毎度", "次回", "次から",
               "始终", "始終", "永遠", "每次都", "千万不要", "千萬不要", "下次", "成日", "次次",
               "เสมอ", "ทุกครั้ง", "ตลอด", "ครั้งหน้า", "ต่อไปนี้", "จากนี้ไป", "ສະເໝີ", "ສະເຫມີ", "ທຸກຄັ້ງ", "ຄັ້ງໜ້າ",
               "ជានិច្ច", "រាល់ដង", "លើកក្រោយ", "តទៅ", "အမြဲ", "ဘယ်တော့မှ", "နောက်တစ်ခါ", "နောက်ပိုင်း")
# Please, and when (doing something), in those scripts: features of the learned reading, fired
# with the please and the when the cues read in the others, so what it learned of them carries.
# This time only, in the scripts written without spaces: a one-off (forms.ONE_OFF).
ONE_OFF_CHARS = ("今回だけ", "今回は", "この一回だけ", "这一次", "這一次", "只这一次", "只這一次", "이번만", "이번에는", "ครั้งนี้")
PLEASE_CHARS = ("请", "請", "麻烦", "お願い", "ください", "下さい", "주세요", "주십시오", "กรุณา", "โปรด", "ກະລຸນາ", "សូម",
                "ကျေးဇူးပြု", "唔該")
WHEN_CHARS = ("的时候", "的時候", "ときは", "時は", "場合は", "할 때", "때는", "เวลา")

# From now on: a standing cue (cues.STRONG_TIME), which alone makes a clause an instruction.
FROM_NOW_ON = ("od zdaj naprej", "odslej", "v prihodnje", "od sada (pa nadalje|)", "od sad", "ubuduće", "ubuduce",
               "отныне", "впредь", "с этого момента", "с сегодняшнего дня", "в дальнейшем", "відтепер", "віднині",
               "надалі", "з цього моменту", "από εδώ και (πέρα|στο εξής)", "από τώρα και στο εξής", "στο εξής",
               "mostantól", "mostantol", "ezentúl", "ezentul", "a jövőben", "từ (giờ|nay|bây giờ) (trở đi|về sau|)",
               "kuanzia (sasa|leo)", "(mula|simula) ngayon", "(aage|aaj) se", "dari sekarang", "seterusnya",
               "من الآن (فصاعدا|فصاعداً)", "מעכשיו", "מעתה", "از (این|حالا) به بعد", "(a partir|des) d'ara",
               "d'ara endavant", "in futuro", "da oggi in poi", "van nu af aan", "in de toekomst", "vanaf vandaag")

# For this conversation only: an instruction that holds until the chat ends, not pinned
# (cues.THIS_CHAT), and a standing cue like "from now on" for the rest of it.
THIS_CHAT = ("(dans|pour|durant|pendant) (cette|la) (conversation|discussion)", "(dans|pour) ce chat",
             "(in|für|fur|während) (diesem|diesen|dieses|dieser) (chat|gespräch|gesprach|unterhaltung)",
             "(en|para|durante) (esta|este) (conversación|conversacion|charla|chat|plática|platica)",
             "(nesta|nessa|neste|nesse|durante esta|durante essa|para esta|para essa) (conversa|chat)",
             "(in|per|durante) (questa|questo) (conversazione|chat)", "(in|voor|tijdens) (dit|deze) (gesprek|chat)",
             "(w|na czas|podczas) (tej|tym) (rozmowie|rozmowy|czacie)", "(v|během|behem) (tomto|této|tejto|tohoto) (rozhovoru|rozhovore|konverzaci|konverzácii|chatu)",
             "i (den här|denna|det här|detta|denne) (konversationen|samtalet|chatten|samtalen|samtale|chat|chatt)",
             "(tässä|tassa) keskustelussa", "(tämän|taman) keskustelun ajan", "ebben a (beszélgetésben|beszelgetesben|csetben|chatben)",
             "(în|in) (conversația|conversatia|chatul|discuția|discutia) (asta|aceasta)", "(în|in) (această|aceasta) (conversație|conversatie|discuție|discutie)",
             "bu (konuşmada|konusmada|sohbette)", "bu (konuşma|konusma|sohbet) boyunca",
             "(в|во) (этом|этой) (разговоре|чате|беседе|диалоге)", "до конца (разговора|этого разговора|чата|беседы)",
             "(у|в) (цій|цьому) (розмові|чаті|діалозі)", "протягом (цієї|цього) (розмови|чату)",
             "σε (αυτή|αυτήν) (τη|την) συζήτηση", "(u|у|tokom|током) (ovom|овом|ovog|овог) (razgovoru|разговору|razgovora|разговора|chatu|četu)",
             "v tem pogovoru", "в (този|тоя) (разговор|чат)", "(šajā|saja) (sarunā|saruna)", "(šiame|siame) pokalbyje",
             "selles vestluses", "(dum|en) (ĉi tiu|cxi tiu|ci tiu) konversacio", "(en|per) (aquesta|aquest) (conversa|xat)",
             "(dalam|di|untuk) (percakapan|obrolan|perbualan|chat|sembang) ini", "sa (usapang|chat na) ito",
             "trong (cuộc trò chuyện|đoạn chat|cuộc hội thoại|cuộc nói chuyện) này", "(katika|kwenye|kwa) mazungumzo haya",
             "is (chat|baatcheet|conversation) (mein|me)", "इस (बातचीत|चैट) (में|के दौरान)", "এই (কথোপকথনে|চ্যাটে)",
             "(في|خلال) هذه المحادثة", "(בשיחה|לאורך השיחה) (הזאת|הזו|הזה)", "در این (گفتگو|گفت‌وگو|چت)")
THIS_CHAT_CHARS = ("この会話", "このチャット", "今回の会話", "这次对话", "這次對話", "本次对话", "这个对话", "這個對話", "这个聊天",
                   "在这次聊天", "이번 대화", "이 대화에서", "이 채팅", "ในการสนทนานี้", "ในแชทนี้", "ในบทสนทนานี้")

# Please: a directive cue (cues.POLITE), so "please ... from now on" is asked in any of them.
PLEASE = ("per favore", "per piacere", "alsjeblieft", "alstublieft", "graag", "se faz favor", "por gentileza",
          "proszę", "prosze", "prosím", "prosim", "snälla", "snalla", "vänligen", "vanligen", "venligst",
          "vennligst", "ole hyvä", "ole hyva", "kérlek", "kerlek", "kérem", "kerem", "vă rog", "va rog",
          "lütfen", "lutfen", "tolong", "mohon", "tafadhali", "pakiusap", "kripya", "kripaya",
          "làm ơn", "пожалуйста", "будь ласка", "παρακαλώ", "παρακαλω", "molim", "molim te", "si us plau",
          "من فضلك", "رجاء", "رجاءً", "בבקשה", "لطفا", "لطفاً",
          "lūdzu", "ludzu", "prašau", "prasau", "palun", "vinsamlegast", "le do thoil", "os gwelwch yn dda", "plîs",
          "jekk jogħġbok", "të lutem", "te lutem", "ju lutem", "молим", "моля", "ве молам", "те молам", "калі ласка",
          "mesedez", "bonvolu", "tanpri", "souple", "por fabor", "allichu",
          "iltimos", "өтінемін", "өтініш", "суранам", "гуйя", "zəhmət olmasa", "xahiş edirəm", "გთხოვ", "გთხოვთ",
          "խնդրում եմ", "խնդրեմ", "እባክህ", "እባክሽ", "እባካችሁ", "कृपया", "कृपा करके", "দয়া করে", "অনুগ্রহ করে",
          "براہ کرم", "مہربانی", "ਕਿਰਪਾ ਕਰਕੇ", "કૃપા કરીને", "தயவுசெய்து", "தயவு செய்து", "దయచేసి", "ದಯವಿಟ್ಟು",
          "ദയവായി", "කරුණාකර", "කරුණාකරලා", "تکایە", "ji kerema xwe", "لو سمحت", "لو سمحتي", "عافاك",
          "fadlan", "don allah", "jọ̀wọ́", "jowo", "biko", "ngicela", "ngiyacela", "ndicela", "nceda", "ndapota",
          "azafady", "faamolemole", "tēnā koa", "kerekere", "pakisuyo", "palihug")

# Could you ...?: a request in question form (forms.REQUEST), not a question.
COULD_YOU = ("(pwede|puwede|pwedeng|puwedeng) (bang|ba|mo)", "(bisa|boleh|bisakah|bolehkah) (kamu|kau|anda|awak|tolong)",
             "(можешь|можете|могли бы|мог бы|могла бы)", "(можеш|могли б)", "(μπορείς|μπορείτε|θα μπορούσες)",
             "(unaweza|mnaweza)", "(poți|poti|ai putea|ați putea|ati putea|puteți|puteti)", "(tudnál|tudnal|tudnád|tudnad)",
             "(možeš|mozes|možete|mozete|можеш|можете) li", "bi li (mogao|mogla|mogli)", "(môžeš|mohol by si|mohla by si)",
             "(bạn|em|anh|chị) có thể", "(pots|podries|podríeu)", "kas (sa|te) (saaksid|saad|saaksite)",
             "vai (tu|jūs|jus) (vari|varētu|varetu)", "ar (gali|galėtum|galetum|galite)",
             "(هل يمكنك|هل تستطيع|ممكن)", "(אתה יכול|את יכולה|תוכל|תוכלי)", "(میشه|می‌شه|میتونی|می‌تونی)")

# My name is ..., call me ...: the user's name (forms.USER_NAME), at a clause's start.
MY_NAME_IS = ("mi nombre es *", "mon nom (est|c'est) *", "mein name ist *", "(il mio nome è|mi chiamo) *",
              "(meu nome é|meu nome e|o meu nome é|eu me chamo|me chamo) *", "(mijn naam is|ik heet) *",
              "(jag|jeg) (heter|hedder) *", "(nazywam się|nazywam sie|mam na imię|mam na imie) *",
              "(jmenuji se|jmenuju se|volám sa|volam sa) *", "(nimeni on|minu nimi on|a nevem) *",
              "(numele meu este|mă numesc|ma numesc) *", "(benim adım|benim adim) *",
              "(меня зовут|мене звати|моё имя|мое имя|με λένε|το όνομά μου είναι) *",
              "(zovem se|зовем се|зовам се|ime mi je|kaip mano vardas|mano vardas|mans vārds ir|mans vards ir) *",
              "(nama saya|nama aku|namaku|ang pangalan ko ay|pangalan ko ay|jina langu ni) *",
              "(tên tôi là|tôi tên là|tôi tên|mình tên là|mình tên|em tên là|anh tên là) *",
              "(اسمي|إسمي|שמי|קוראים לי|اسم من|اسمم) *", "(nire izena|che réra|che rera|sunana|orúkọ mi ni|oruko mi ni) *",
              "(zovi|зови) me *", "(зови|называй) меня *", "називай мене *", "(panggil|panggilah) (saya|aku) *",
              "tawagin mo (akong|ako) *", "(hãy gọi|gọi) (tôi|mình|em) là *", "(λέγε|φώναζέ|φώναζε) με *",
              "(říkej|rikej) mi *", "volaj ma *", "(szólíts|szolits) *", "(spune-mi|zi-mi) *", "kutsu minua *",
              "(תקרא|תקראי) לי *", "(ناديني|نادني) *")

# In this project, in this repo: what is said is about the project (forms.PROJECT).
IN_THIS_PROJECT = ("(nesse|neste|desse|deste) (repositório|repositorio|projeto)", "(in|nel) questo repository",
                   "(in|voor) deze (repo|repository|codebase)", "w tym (repozytorium|kodzie)", "v tomto (repozitáři|repozitari|kódu)",
                   "i (dette|det her) (prosjektet|projekt|projektet|repoet|repo)", "ebben a (projektben|repóban|repoban|kódban)",
                   "(în|in) (acest|proiectul) (proiect|repo|ăsta|asta)", "bu (projede|repoda|kod tabanında|depoda)",
                   "(в|у) (этом|этом же|цьому) (проекте|репозитории|репо|проєкті|проекті|репозиторії)",
                   "σε αυτό το (έργο|project|repo)", "(u|у) (ovom|овом) (projektu|пројекту|repou|repozitoriju)",
                   "v tem (projektu|repozitoriju)", "в този (проект|репозиторий)", "(šajā|saja) projektā", "(šiame|siame) projekte",
                   "selles projektis", "(en|a) aquest (projecte|repositori|repo)", "(katika|kwenye) (mradi|hazina) huu",
                   "(sa|dito sa) (proyektong|repo na) ito", "trong (dự án|repo|kho mã) này", "is (project|repo) (mein|me)",
                   "इस (प्रोजेक्ट|रिपो) में", "(في|داخل) هذا (المشروع|المستودع|الريبو)", "(בפרויקט|בריפו) (הזה|הזאת)",
                   "در این (پروژه|ریپو|مخزن)", "এই (প্রজেক্টে|প্রকল্পে|রিপোতে)")

# The same in the scripts written without spaces (and Korean).
PROJECT_CHARS = ("このプロジェクト", "このリポジトリ", "このリポ", "本プロジェクト", "这个项目", "這個專案", "这个仓库", "這個倉庫", "本项目",
                 "我们项目", "我们的项目", "이 프로젝트", "이 저장소", "이 레포", "โปรเจกต์นี้", "โปรเจคนี้")

# Remember, keep in mind, note, don't forget: a memory request (forms.MEMORY) at a clause's start.
REMEMBER = ("ricorda", "ricordati", "tieni (a|) mente", "tieni presente", "prendi nota", "non dimenticare",
            "lembra", "lembre", "lembre-se", "lembra-te", "anota", "anote", "tenha em mente", "(não|nao) (esqueça|esqueca)",
            "ten presente", "tenlo presente", "(para|) que lo tengas presente", "onthoud", "vergeet niet", "noteer",
            "houd in gedachten", "kom (ihåg|ihag)", "(glöm|glom) inte", "husk", "glem ikke", "ikke glem",
            "(pamiętaj|pamietaj)", "(zapamiętaj|zapamietaj)", "zanotuj", "nie zapomnij", "pamatuj", "zapamatuj si",
            "(nezapomeň|nezapomen)", "muista", "(älä|ala) unohda", "pane muistiin", "jegyezd meg", "ne felejtsd",
            "(ține|tine) minte", "(reține|retine)", "nu uita", "unutma", "aklında tut", "ingat", "ingatlah",
            "jangan lupa", "tandaan", "huwag kalimutan", "kumbuka", "usisahau", "yaad (rakhna|rakho|rakh)",
            "hãy nhớ", "nhớ rằng", "ghi nhớ", "đừng quên", "запомни", "запомните", "не забывай", "не забудь",
            "имей в виду", "учти", "запам'ятай", "не забувай", "май на увазі", "θυμήσου", "να θυμάσαι",
            "σημείωσε", "μην ξεχνάς", "تذكر", "تذكّر", "لا تنس", "זכור", "תזכור", "אל תשכח", "یادت باشه",
            "gogoratu", "gogoan (izan|hartu)", "ez ahaztu", "አስታውስ", "አስታውሺ", "አትርሳ", "አትርሺ", "დაიმახსოვრე",
            "გახსოვდეს", "არ დაგავიწყდეს", "հիշիր", "հիշեք", "չմոռանաս", "recorda", "no oblidis", "tingues en compte",
            "(zapamti|upamti|zapamtite|запамти|упамти)", "(ne zaboravi|не заборави)", "zapomni si", "ne pozabi",
            "(zapamätaj|zapamataj) si", "nezabudni", "не забравяй", "atceries", "neaizmirsti", "atsimink",
            "(įsimink|isimink)", "(nepamiršk|nepamirsk)", "pea meeles", "(jäta|jata) meelde", "(ära|ara) unusta",
            "mundu", "ekki gleyma", "cuimhnigh", "cofia", "paid ag anghofio", "ftakar", "mbaj mend", "mos harro",
            "sonje", "याद (रखना|रखो|रखें|रखिए)", "ध्यान (रखना|रखो|रखें)", "মনে (রেখো|রাখবেন|রাখো)",
            "நினைவில் (வை|வைத்துக்கொள்|வையுங்கள்)", "یاد (رکھنا|رکھو|رکھیں)", "yadda saxla", "есте сақта", "ұмытпа",
            "eslab qol", "(rántí|ranti)", "(ka|ki) tuna", "cheta", "khumbula", "xasuuso", "ha illoobin", "onthou",
            "moenie vergeet nie")
# The same in the scripts written without spaces (and Korean, whose particles cling to the verb).
REMEMBER_CHARS = ("覚えておいて", "覚えといて", "覚えててね", "記憶しておいて", "メモしておいて", "忘れないで", "记住", "記住",
                  "记一下", "記一下", "记下来", "記下來", "别忘了", "別忘了", "기억해", "잊지 마", "잊지마", "จำไว้", "อย่าลืม")

# What people tell an assistant to do, in the imperative: use, write, answer, give, keep, call,
# explain (cues.VERB_WORDS, which holds the English, French, German and Spanish); none that is an
# English word or a name besides ("anna", Finnish for give; "hall", "tal", "do").
IMPERATIVES = frozenset("""
usa usate scrivi rispondi rispondimi dammi metti evita tieni chiamami spiega parla
escreve escreva responde responda dá dê coloca coloque evita evite mantém mantenha chama chame explica explique fala
gebruik schrijf antwoord geef zet vermijd houd noem spreek
używaj uzywaj pisz napisz odpowiadaj dawaj podawaj unikaj trzymaj nazywaj wyjaśniaj wyjasniaj mów
använd anvand skriv svara sätt undvik håll kalla förklara forklara prata
brug bruk svar giv undgå unngå kald kall forklar snakk
käytä kayta kirjoita vastaa pidä pida vältä kutsu selitä selita puhu
používej pouzivej piš odpovídej odpovidej dávej davej vyhni drž říkej rikej vysvětli vysvetli mluv
használj hasznalj írj irj válaszolj valaszolj kerüld keruld hívj hivj magyarázd beszélj
folosește foloseste scrie răspunde raspunde dă evită evita păstrează pastreaza spune explică explica vorbește
kullan yaz cevapla kaçın kacin söyle soyle açıkla acikla konuş konus
gunakan pakai tulis jawab balas berikan hindari panggil jelaskan bicara
gamitin isulat sagutin ibigay iwasan tawagin ipaliwanag
tumia andika jibu nipe epuka niite eleza ongea
likho batao bolo samjhao rakho karo
dùng viết đưa tránh gọi nói
используй пиши отвечай давай избегай называй объясняй говори
використовуй пиши відповідай давай уникай називай пояснюй говори
χρησιμοποίησε γράψε απάντα απάντησε δώσε απόφυγε φώναξε εξήγησε μίλα
""".split())

# Remember to, don't forget to: a reminder, judged as an instruction or a task (forms.NOT_MEMORY).
REMINDER = ("remember to", "(don't|dont|do not|never) forget to", "(ricorda|ricordati|ricordatevi) di", "non dimenticare di", "(lembre-se|lembra-te|lembre|lembra) de",
            "(não|nao) (esqueça|esqueca|esqueças|esquecas) de", "vergeet niet (te|om)", "(pamiętaj|pamietaj) (żeby|zeby|aby)",
            "nie zapomnij (żeby|zeby|aby)", "(n'oublie|n'oubliez) pas de")
REMINDING = Phrases(*REMINDER)

# The user saying what they are, do or have ("je suis ...", "Könyvelő vagyok", "Είμαι δασκάλα"):
# one feature of the learned reading, so "I'm a nurse" in one language carries to the others.
SELF_WORDS = (
    "i'm (a|an)", "i am (a|an)", "i work (as|at|in|on|for|nights|days)", "i live in", "i'm based in", "i run (a|an)",
    "i teach", "(i|we) (practise|practice) (in|as|law|medicine)", "i study", "i'm studying", "i own (a|an)",
    "i'm from", "my (thesis|dissertation|phd|research|job|role|company|shop|business|school|clinic|practice) is",
    "je suis", "j'habite", "je travaille", "ich bin", "ich arbeite", "ich wohne", "soy", "trabajo (como|en)",
    "vivo en", "sono (un|una|uno|un')", "lavoro (come|in|a)", "vivo a", "sou", "trabalho (como|em|num|numa)",
    "moro em", "ik ben", "ik werk", "ik woon", "jag är", "jag ar", "jag jobbar", "jag arbetar", "jag bor",
    "jag leder", "jeg er", "jeg arbeider", "jeg arbejder", "jeg jobber", "jeg bor", "jestem", "pracuję", "pracuje",
    "mieszkam", "jsem", "pracuji", "bydlím", "bydlim", "olen", "työskentelen", "asun", "vagyok", "dolgozom",
    "sunt", "lucrez", "locuiesc", "είμαι", "δουλεύω", "μένω", "я работаю", "я живу", "я працюю", "ben bir",
    "çalışıyorum", "yaşıyorum", "saya seorang", "saya bekerja", "saya tinggal", "aku seorang", "ako ay", "ako",
    "mimi ni", "ninafanya kazi", "ninaishi", "main (ek|ik)", "hoon", "hun", "tôi là", "tôi làm", "tôi sống",
    "أنا", "אני", "هستم", "mình là", "mình dạy", "mình làm", "em là", "tôi dạy", "mo jẹ́", "mo je", "ek is", "ek werk",
    "ek bly", "ma olen", "ma töötan", "ma elan", "es esmu", "es strādāju", "es dzīvoju", "aš esu", "aš dirbu", "aš gyvenu",
    "ég er", "ég vinn", "ég bý", "dw i'n", "rydw i'n", "unë jam", "ja sam", "radim kao", "živim u", "аз съм", "sóc",
    "treballo", "visc a", "mwen se", "mwen travay", "mwen rete", "io sono", "eu sou", "eu trabalho", "ich unterrichte",
    "je suis prof", "j'enseigne", "enseño", "ensino", "insegno", "doceo", "ninafundisha", "nafundisha", "mimi",
    "(i'm|i am) the", "i coach", "i manage (a|an|the|two|three)", "i farm", "i breed", "i grow", "i sell",
    "i keep (bees|goats|sheep|chickens|cattle)",
    "man ir", "mi ta", "mi ta un", "i dey", "my name na", "radim kao", "radim u", "pracuję jako", "trabajo de", "sou (um|uma)")
SELF = Phrases(*SELF_WORDS)
SELF_CHARS = ("私は", "僕は", "我是", "我在", "我教", "我住", "我做", "저는", "나는", "ฉันเป็น", "ผมเป็น", "ฉันทำงาน", "ผมทำงาน",
              "ฉันสอน", "ผมสอน")
# The word "I" where the language drops the verb or ends on it: "Я тестировщик ...", "Ben öğretmenim",
# "আমি ঢাকায় থাকি", "मैं दिल्ली में रहता हूँ".
SELF_FIRST = frozenset(("я", "ben", "আমি", "मैं", "میں", "நான்", "నేను", "मी", "මම", "ខ្ញុំ", "እኔ", "მე", "ես", "би", "мен",
                        "mən", "jien"))


# "this"/"these" pointing at one thing (a one-off task's object: "Potřebuji shrnutí tohoto rozsudku",
# "لخّص لي هذا البيان"), one feature across languages for the learned reading. Words that are also
# another language's common words ("to", "die", "ten", "ez") are left out.
DEMONSTRATIVES = frozenset("""
this these esto este esta estos estas ese esa eso ce cet cette ces dies diese dieser dieses diesen diesem questo
questa questi queste quello quella isto isso essa esse deze dit detta denna dette denne tämä tätä tässä tento tato
toto tohoto této tuto tenhle tahle tohle tego tej этот эта это эти этого эту этой цей ця це ці цього цю цієї bu şu
bunu bunun ini itu này αυτό αυτή αυτόν αυτά هذا هذه هذي זה זאת यह इस ये এই এটা ito iyan
""".split())
DEMONSTRATIVE_CHARS = ("这个", "這個", "这份", "這份", "这篇", "這篇", "この", "これ", "이것", "ဒီ", "នេះ", "นี้", "ນີ້")


def points(words: list[str], masked: str) -> bool:
    return any(w in DEMONSTRATIVES for w in words) or _holds(masked, DEMONSTRATIVE_CHARS)


def habit(words: Words, masked: str) -> bool:
    """An always/never/by default in one of these languages."""
    return HABIT.find(words) >= 0 or _holds(masked, HABIT_CHARS)


def says_self(words: list[str], masked: str) -> bool:
    """The user saying what they are, do or have."""
    return SELF.find(words) >= 0 or (len(words) > 1 and words[0] in SELF_FIRST) \
        or _holds(masked, SELF_CHARS)


def remember_marked(masked: str) -> bool:
    return _holds(masked, REMEMBER_CHARS)


def project_marked(masked: str) -> bool:
    return _holds(masked, PROJECT_CHARS)


def one_off_marked(masked: str) -> bool:
    return _holds(masked, ONE_OFF_CHARS)


def this_chat_marked(masked: str) -> bool:
    """A "for this conversation" in a script written without spaces (or Korean's particles)."""
    return _holds(masked, THIS_CHAT_CHARS)


def polite(masked: str) -> bool:
    return _holds(masked, PLEASE_CHARS)


def when(masked: str) -> bool:
    return _holds(masked, WHEN_CHARS)


def _holds(masked: str, marks: tuple[str, ...]) -> bool:
    """A mark of a script written without spaces, anywhere in the clause (it has no word bounds)."""
    return any(mark in masked for mark in marks)
