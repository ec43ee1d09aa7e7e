"""What is taught in the languages the cues have no grammar for (teaching/lexicon.py), and what
of a prompt that mixes a task and a teaching the teaching keeps. Phrasings in no corpus part."""

from __future__ import annotations

import math

import pytest

from tmg.memory.teaching import find_teachings, might_teach
from tmg.memory.teaching.segment import user_clauses


def taught(text: str, previous: str = "") -> list[tuple[str, str]]:
    return [(t.kind, t.statement) for t in find_teachings(text, previous)]


@pytest.mark.parametrize("text,statement", [
    ("Onthoud: mijn kantoor zit in Gent.", "Onthoud: mijn kantoor zit in Gent."),
    ("Kumbuka kwamba ninafundisha hesabu Arusha.", "Kumbuka kwamba ninafundisha hesabu Arusha."),
    ("Pamiętaj, że mam psa i dwa koty.", "Pamiętaj, że mam psa i dwa koty."),
    ("Запомни: мой сервер работает на Debian 12.", "Запомни: мой сервер работает на Debian 12."),
])
def test_a_memory_request_in_another_language_keeps_what_it_asks_to(text, statement) -> None:
    assert taught(text) == [("fact", statement)]


@pytest.mark.parametrize("text", [
    "Tafadhali nijibu kwa Kiswahili kuanzia sasa.",
    "Proszę, od teraz odpowiadaj krótko.",
    "Lütfen bundan sonra da kısa cevap ver, from now on short answers.",
])
def test_please_with_from_now_on_in_another_language_is_an_instruction(text) -> None:
    assert [kind for kind, _ in taught(text)] == ["instruction"]


def test_a_memory_verb_in_a_question_keeps_nothing() -> None:
    assert taught("Ricordi come si chiama il mio gatto?") == []


def test_a_greek_question_mark_is_a_question_not_a_line_of_code() -> None:
    clauses = user_clauses("Είμαι νοσηλεύτρια στην Πάτρα. Ποια είναι η δόση για παιδιά;")
    assert [c.masked[-1] for c in clauses] == [".", "?"]


@pytest.mark.parametrize("text,statement", [
    ("hey can u write me a haiku about rain. also pls always sign off with a dash",
     "pls always sign off with a dash"),
    ("Port this script to Go — and btw we never use cgo in this repo — then add a benchmark for it.",
     "we never use cgo in this repo"),
])
def test_a_task_beside_a_teaching_is_no_part_of_it(text, statement) -> None:
    assert [s for _, s in taught(text)] == [statement]


def test_a_bare_rule_after_another_is_still_part_of_it() -> None:
    assert [s for _, s in taught("quit hedging. just say it.")] == ["quit hedging. just say it."]


def test_a_request_after_but_is_a_request() -> None:
    assert [k for k, _ in taught("sorry to nag but could you stop calling every warning a bug?")] == ["instruction"]


@pytest.mark.parametrize("text", ["Ricordati di rispondere sempre in italiano.", "N'oublie pas de toujours citer tes sources."])
def test_remember_to_in_another_language_is_a_reminder_not_a_fact(text) -> None:
    assert [kind for kind, _ in taught(text)] == ["instruction"]


@pytest.mark.parametrize("text", [
    "Gebruik altijd pathlib in plaats van os.path.", "Zawsze odpowiadaj po polsku.",
])
def test_an_imperative_with_always_in_another_language_is_an_instruction(text) -> None:
    assert taught(text) == [("instruction", text)]


def test_a_name_that_is_a_verb_elsewhere_gives_no_order() -> None:
    assert taught("Anna always forgets her keys lol") == []


@pytest.mark.parametrize("text", ["Mostantól mindig magyarul válaszolj.", "Od sada mi odgovaraj na hrvatskom."])
def test_from_now_on_in_another_language_is_read_by_the_cues(text) -> None:
    assert [(t.kind, t.statement, t.standing, "from now on" in t.cues) for t in find_teachings(text)] == [
        ("instruction", text, True, True)]


@pytest.mark.parametrize("text", [
    "I would like that you always answer me with the code first",  # "I would like that you": a request
    "Bitte gib mir Daten immer im ISO-Format aus",  # German typed without umlauts is not English
])
def test_a_request_in_the_words_of_another_grammar_is_an_instruction(text) -> None:
    assert [kind for kind, _ in taught(text)] == ["instruction"]


@pytest.mark.parametrize("text", [
    "코드 리뷰할 때는 한국어로 설명해 주세요",  # when ..., please: the cues' when and please, in Korean
    "メールを書くときは、敬語でお願いします。",
    "写SQL的时候请用大写关键字",  # a sentence of wide characters is no bare task for being one "word"
])
def test_when_and_please_in_the_scripts_written_without_spaces_make_an_instruction(text) -> None:
    assert taught(text) == [("instruction", text)]


def test_please_alone_in_those_scripts_asks_for_one_thing() -> None:
    assert taught("请帮我把这段翻译成英文") == []  # please translate this passage into English


def test_hinglish_is_read_as_its_own_language_not_as_english() -> None:
    text = "har baar code ke saath ek example bhi dena"  # every time, give an example with the code
    assert taught(text) == [("instruction", text)]


@pytest.mark.parametrize("answer, reply", [
    ("Столица Австралии — Сидней.", "Нет, столица Австралии — Канберра."),
    ("《红楼梦》的作者是罗贯中。", "不是，红楼梦的作者是曹雪芹，罗贯中写的是三国演义。"),
])
def test_a_correction_in_a_script_with_no_latin_letters_is_read_against_its_answer(answer, reply) -> None:
    assert [t.kind for t in find_teachings(reply, answer)] == ["correction"]


def test_a_quotation_in_corner_brackets_is_a_quotation() -> None:
    assert taught("「いつも笑顔で」というポスターの文を英訳して") == []  # translate the poster's "always smile"


def test_a_name_in_a_short_reply_lets_it_through_the_word_gate() -> None:
    assert might_teach("nee hoor, dat is Utrecht.", "De hoofdstad van de provincie is Amersfoort.")


@pytest.mark.parametrize("text", [
    "Dans cette conversation, réponds-moi sans listes à puces.",
    "In diesem Chat bitte nur kurze Sätze.",
    "Bu sohbette cevapları maddeler halinde ver.",
    "В этом чате отвечай только по-русски, пожалуйста.",
    "このチャットでは敬語を使わないでください。",
    "Trong cuộc trò chuyện này, hãy trả lời ngắn gọn.",
])
def test_an_instruction_for_this_conversation_in_another_language_is_kept_unpinned(text) -> None:
    found = find_teachings(text)
    assert [(t.kind, t.statement, t.standing) for t in found] == [("instruction", text, False)]


@pytest.mark.parametrize("text", ["هل يجب أن أستخدم دائماً مفاتيح SSH؟", "いつもこの形式で書くべきですか？"])
def test_a_question_asked_with_its_own_question_mark_teaches_nothing(text) -> None:
    assert taught(text) == []


@pytest.mark.parametrize("text", [
    "Pwede bang from now on, English lang ang sagot mo?",
    "Можешь впредь отвечать без эмодзи?",
])
def test_a_request_in_question_form_in_another_language_asks_for_a_habit(text) -> None:
    assert [kind for kind, _ in taught(text)] == ["instruction"]


@pytest.mark.parametrize("text", [
    "Gogoratu: nire bulegoa Bilbon dago.",
    "დაიმახსოვრე, რომ ჩემი ქალიშვილი ნინოა.",
    "Zapamti da radim noćne smjene.",
    "覚えておいて、うちの犬はポチです。",
    "记住，我的项目用的是 Go 1.22。",
])
def test_remember_in_more_languages_keeps_what_it_asks_to(text) -> None:
    assert taught(text) == [("fact", text)]


@pytest.mark.parametrize("text", ["Nire izena Ane da.", "Меня зовут Олег.", "Tên tôi là Lan.", "Ik heet Joost.",
                                  "Ang pangalan ko ay Marisol.", "Zovi me Kapetane.", "Panggil saya Budi."])
def test_my_name_is_in_more_languages_is_kept(text) -> None:
    assert taught(text) == [("fact", text)]


@pytest.mark.parametrize("text", ["Ek werk as 'n verpleegster in Pretoria.", "আমি ঢাকায় থাকি।", "Es strādāju par skolotāju.",
                                  "ฉันสอนภาษาอังกฤษที่เชียงใหม่"])
def test_the_learned_reading_is_told_when_the_user_says_what_they_are_or_do(text) -> None:
    from tmg.memory.teaching.judge import clause_features

    assert all("self" in feats for _, feats, _ in clause_features(text)), text
    assert not any("self" in feats for _, feats, _ in clause_features("Men are from Mars, says the book."))


def test_a_romanian_with_after_from_now_on_is_no_plan_of_the_users() -> None:
    text = "De acum înainte cu diacritice în toate răspunsurile."
    assert taught(text) == [("instruction", text)]


@pytest.mark.parametrize("text", [
    "Жауапты әрқашан кестемен бер.",             # Kazakh
    "Одговарај ми увек на српском.",              # Serbian, Cyrillic
    "Ngicela ungibhalele njalo ngamafuphi.",      # Zulu
    "សរសេរជានិច្ចជាភាសាខ្មែរ",                    # Khmer, no spaces
    "Scríobh gach uair go gearr dom.",            # Irish
])
def test_always_in_more_languages_reaches_the_learned_reading(text) -> None:
    from tmg.memory.teaching.judge import clause_features

    assert any("sig:s:habit word" in feats for _clause, feats, _ruled in clause_features(text, "ok"))


@pytest.mark.parametrize("text", ["Fadlan had iyo jeer si kooban ii jawaab.", "Koyaushe ka amsa min da Hausa.",
                                  "Palun vasta alati lühidalt.", "Ndapota nguva dzose pindura zvishoma."])
def test_always_and_please_written_in_plain_letters_pass_the_word_gate(text) -> None:
    assert might_teach(text)


def test_and_or_by_the_way_in_another_language_does_not_open_what_is_kept() -> None:
    found = find_teachings("Y a partir de ahora, contéstame en gallego.")
    assert [t.statement for t in found] == ["a partir de ahora, contéstame en gallego."]


@pytest.mark.parametrize("text", ["Só desta vez, escreve em inglês, é para o senhorio.", "Tym razem napisz to po niemiecku.",
                                  "今回だけ英語で書いてください。", "Sirf is baar English me likho, boss ke liye hai."])
def test_this_time_only_in_another_language_is_a_one_off(text) -> None:
    assert taught(text, "ok") == []


@pytest.mark.parametrize("text", ["hazme una lista de la compra para seis", "scrivimi una filastrocca sui gatti"])
def test_make_me_one_thing_in_spanish_or_italian_is_a_task(text) -> None:
    assert taught(text, "ok") == []


@pytest.mark.parametrize("text, first", [
    ("मैं नासिक में दर्ज़ी हूँ। कुर्ते के लिए कितना कपड़ा लगेगा?", "मैं नासिक में दर्ज़ी हूँ।"),
    ("我在高雄教鋼琴。這首曲子適合初學者嗎？", "我在高雄教鋼琴。"),
    ("ខ្ញុំលក់ផ្លែឈើនៅផ្សារធំថ្មី។ តើត្រូវរក្សាទុកស្វាយយ៉ាងដូចម្តេច?", "ខ្ញុំលក់ផ្លែឈើនៅផ្សារធំថ្មី។"),
])
def test_a_script_with_its_own_full_stop_ends_a_sentence_there(text, first) -> None:
    clauses = user_clauses(text)
    assert len(clauses) == 2 and text[clauses[0].start:clauses[0].end] == first


@pytest.mark.parametrize("text", [
    "Mia nonna diceva sempre di non lavare mai i funghi. È vero?",
    "Мой тренер говорит, что растяжку надо делать всегда после бега. Это так?",
    "Komşum diyor ki domatesleri her zaman sabah sulamak lazım, doğru mu?",
])
def test_what_others_say_in_another_language_is_reported_speech(text) -> None:
    assert taught(text) == []


@pytest.mark.parametrize("text", [
    "Formuliere bitte eine kurze Notiz für die Kollegen. Inhalt: ab sofort immer die Tür abschließen.",
    "Please help me draft a notice for the staff room: from Monday everyone must always label their food.",
    "Redáctame un aviso para los vecinos: a partir de ahora la basura se saca siempre después de las 20h.",
])
def test_a_text_to_write_for_others_keeps_nothing_of_its_content(text) -> None:
    assert taught(text) == []


def test_a_request_that_asks_which_of_two_it_is_asks_for_an_answer() -> None:
    answer = "Stir the dough for ten minutes."
    assert taught("Would you always knead it by hand, or is a mixer fine too?", answer) == []


def test_a_greeting_or_thanks_before_a_teaching_is_no_part_of_it() -> None:
    found = taught("Good evening. From now on please give oven temperatures in Fahrenheit.")
    assert found == [("instruction", "From now on please give oven temperatures in Fahrenheit.")]
    found = taught("That did the trick, cheers! Could you keep in mind that our kiln only reaches 1200C?",
                   "Fire it at cone 10.")
    assert [s for _, s in found] == ["Could you keep in mind that our kiln only reaches 1200C?"]


def test_just_this_once_in_indonesian_is_a_one_off() -> None:
    assert taught("Sekali ini saja ya, tolong tulis jawabannya dalam bahasa Inggris.") == []


@pytest.mark.parametrize("text", ["Moj šef je uvijek govorio da nikad ne pišemo testove.",  # Croatian "has said"
                                  "Mama yangu alisema kuanzia sasa tusile sukari kabisa."])  # Swahili
def test_what_someone_else_said_is_reported_in_croatian_and_swahili(text) -> None:
    assert taught(text) == []


def test_je_before_a_french_speech_verb_is_still_the_user_speaking() -> None:
    from tmg.memory.teaching.phrases import Words
    from tmg.memory.teaching.speech import reported

    assert not reported(Words("je dit toujours aux élèves de relire"))
    assert reported(Words("baka je uvijek govorila da nikad ne peglam svilu"))


def test_who_the_user_is_said_in_nigerian_pidgin_is_kept_beside_their_question() -> None:
    text = "I dey teach maths for one secondary school for Enugu. wetin be the best way to explain fractions?"
    assert taught(text) == [("fact", "I dey teach maths for one secondary school for Enugu.")]


def test_a_first_prompt_in_another_language_with_no_cue_of_habit_needs_the_model_sure() -> None:
    from tmg.memory.teaching import learned

    # A model 0.8 sure the clause teaches, and that it is an instruction: above THRESHOLD, below SURE_ELSEWHERE.
    model = {"bias": [0.0, math.log(2), 0.0, 0.0]}
    first_prompt = ["bias", "first", "no answer", "no cue"]
    assert learned.reading(first_prompt, model) is None  # "me ajuda a responder esse hóspede": the task
    assert learned.reading(first_prompt[:-1] + ["sig:s:habit word"], model) == "instruction"  # "sempre ..."
    assert learned.reading(["bias", "first", "no cue"], model) == "instruction"  # after an answer
