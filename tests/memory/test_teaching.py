"""The teaching scorer: what a typed prompt teaches, judged by its structure (tmg.memory.teaching).

The corpus measurements are bench/memory_teaching.py's; these are the behaviours each part must
keep, in phrasings that are in neither part of the corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tmg.memory.teaching import find_teachings, might_teach
from tmg.memory.teaching.segment import user_clauses

REPO = Path(__file__).resolve().parents[2]
ANSWER = "Use `git reset --hard` to undo it."


def taught(text: str, previous: str = "") -> list[str]:
    return [t.statement for t in find_teachings(text, previous)]


@pytest.mark.parametrize("text", [
    "from now on answer in one sentence",
    "please don't use markdown tables in your answers",
    "stop using emojis",
    "I prefer answers without code comments",
    "you should always show the command before explaining it",
    "Don't ever suggest sudo pip install",
    "keep answers under 100 words from now on",
    "Never use print debugging in the code you write for me",
    "when you show git commands, include the short form too",
    "could you always add the time complexity?",
    "avoid jargon in every answer",
    "Always reply in British English.",
    "no more bullet points",
    "please try to always include units",
    "Be concise.",
    "answers in german please",
    "in this repo run the linter before every commit",
    "Désormais, tutoie-moi.",
    "Ab sofort bitte keine Emojis mehr.",
    "De ahora en adelante, contesta en inglés.",
    "pls always use pathlib instead of os.path",
    "I'd like all future answers to be in markdown",
    "when writing python for me, type hint everything",
    "Don't suggest Docker, I hate it.",
    "i want short answers",
    "Please stop with the bullet points",
    "Can you not use so many exclamation marks?",
    "Going to need you to always cite sources",
    "Make it a rule: no semicolons.",
    "Default to TypeScript.",
    "From here on out, no more than 3 bullets.",
    "In the future please ask before deleting files",
    "Je veux que tu répondes toujours en français",
    "Bitte antworte immer kurz.",
    "Por favor, no uses jerga.",
    "Siempre responde con ejemplos",
    "I like my answers short",
    "in this repo we never push to main",
    "we always squash here",
    "ok new rule: tests go in tests/, never next to the code",
    "listen, i only want python 3.12 syntax from you",
    "for all future shell scripts, target POSIX sh",
    "Nunca uses tablas en tus respuestas",
    "Ne me réponds jamais en anglais.",
    "Never forget to run the linter before committing",
    "hey so i've been meaning to say, can u pls always put the final command in its own code block at the end",
    "Do not use the word 'delve' ever again.",
    "keep responses in plain text, no markdown",
    "our services are all written in Go here, so assume Go unless I say otherwise",
    "Bitte verwende in Zukunft keine Anglizismen.",
    "Remember to always use UTC",
    "Can you refactor this function? Also, going forward please use early returns instead of nested ifs.",
    "Here's my config:\n```yaml\nfoo: 1\n```\nBy the way, always validate YAML before you suggest it.",
    "gotta say, your answers are way too long. shorter ones please, always.",
    "As a rule, don't suggest paid tools.",
    "Assume I'm on Python 3.11 unless I say otherwise.",
])
def test_instructions_however_they_start(text) -> None:
    (teaching,) = find_teachings(text)
    assert teaching.kind == "instruction" and teaching.standing


@pytest.mark.parametrize("text", [
    # an interjection opens the clause and changes nothing
    "omg stop apologising in every reply", "welp, from now on answer in bullet points",
    # a tag on a statement does not make it a question
    "you'll answer in Spanish from now on, ok?", "From now on no more emojis, deal?",
    # typed without punctuation: the main clause starts after the subordinate one
    "whenever you write sql for me use uppercase keywords",
    "when you give me bash dont add comments to it",
    "every time you suggest a library could you link its docs",
    "i read these on a kindle so please no wide code blocks",
    # a manner every answer keeps, its reason after it
    "one question at a time pls, i get lost otherwise",
])
def test_instructions_typed_as_people_type(text) -> None:
    (teaching,) = find_teachings(text)
    assert teaching.kind == "instruction" and teaching.standing and teaching.statement in text


@pytest.mark.parametrize("text", [
    "D'ora in poi scrivimi i commenti nel codice in italiano, per favore.", "Od teraz odpowiadaj krótko.",
    "mulai sekarang jawab dalam bahasa Indonesia ya", "Jatkossa vastaa suomeksi.",
    "de acum inainte raspunde-mi pe scurt", "Voortaan graag antwoorden in het Nederlands.",
    "A partir de ahora respóndeme en español, no es broma.",  # "no joke" takes nothing back
])
def test_from_now_on_in_other_languages_makes_an_instruction_standing(text) -> None:
    (teaching,) = find_teachings(text)
    assert (teaching.kind, teaching.statement, teaching.standing) == ("instruction", text, True)


@pytest.mark.parametrize("text", [
    # an imperative by its place, whatever its verb
    "next time just zip the logs before you send them", "whenever I paste a diff, skim it for typos first",
    "by default, alphabetise the imports",
    # requests as questions and as wishes
    "any chance you could always show the SQL too?", "is it possible for you to never use the passive voice?",
    "It would be great if you could cite the RFC whenever you mention a protocol.",
    "I wonder if you could use plain words when you explain maths to me",  # when you <do>, anywhere
    "I was wondering if you might stop bolding random words from now on?",
    # a habitual want, what the user's words mean
    "i never want to see `any` in your TypeScript", "when I say ship it, I mean merge and tag",
    "by 'the box' I mean my home server",
    # a habit said last, after the verb that does it: the assistant's
    "I sing tenor so write the parts in treble clef with the octave mark every time",
    # typed without the letters that would give the language away, still not English
    "Fremover vil jeg gerne have korte svar og ikke lange lister, tak.",
    "Lain kali jangan guna singkatan dengan saya",
])
def test_instructions_by_their_grammar_not_their_verb(text) -> None:
    (teaching,) = find_teachings(text)
    assert teaching.kind == "instruction" and teaching.standing and teaching.statement in text


@pytest.mark.parametrize("text", [
    "when the build fails, slack pings me", "next time I'll know better", "whenever it rains, my wifi drops",
    "when I say this out loud it sounds silly", "it would be great if this worked",
])
def test_the_same_shapes_teach_nothing_with_a_subject_of_their_own(text) -> None:
    assert taught(text) == []


@pytest.mark.parametrize("text", [
    "remember it must handle empty lists too", "keep in mind this has to run on Python 3.8",
])
def test_what_the_task_at_hand_must_be_is_no_fact_to_keep(text) -> None:
    assert taught(text) == []


@pytest.mark.parametrize("text", [
    "just so you know, my laptop is an M2 Mac",
    "I need you to remember that our fiscal year ends in June.",
    "help me remember: the dentist is on Thursday at 9",
    "the standup moved to 9:15, keep that for me",
    "I'm Prof. Lindqvist in emails, please.",
    "remember that our staging cluster is called blue",
    "note that I'm colour blind, so don't rely on red/green in charts",
    "Can you remember that my dog is called Rex?",
    "for the record, the on-call rota changes on Mondays",
    "My name is Priya",
    "my timezone is CET, keep that in mind",
    "Heads up: I'm colorblind.",
    "You will address me as Dr. Smith.",
    "btw the prod database is read-only for me, remember that",
    "Por favor recuerda que trabajo en horario de Madrid.",
])
def test_facts_the_user_asks_to_keep_are_pinned(text) -> None:
    (teaching,) = find_teachings(text)
    assert teaching.kind == "fact" and teaching.standing and teaching.statement in text


@pytest.mark.parametrize("text", [
    "I'm allergic to shellfish.", "i am left handed btw", "my daughter's coeliac",
    "we keep halal at home", "my husband has a severe sesame allergy", "I'm red-green colour blind",
    # in the languages people type to the assistant, accents or none
    "Ik ben linkshandig.", "je suis allergique aux arachides", "Jag är vegetarian.", "sono celiaca",
])
def test_a_condition_every_answer_should_allow_for_is_kept_unasked(text) -> None:
    (teaching,) = find_teachings(text)
    assert (teaching.kind, teaching.standing, teaching.cues) == ("fact", True, ("condition",))


@pytest.mark.parametrize("text", [
    "I'm not vegan, but my flatmate is", "am I allergic to penicillin if my mum is?",
    "if I were diabetic, what would change?", "is this recipe vegetarian?",
    "a friend is coming for dinner and she's vegan",  # hers, and not one of the family's
])
def test_a_condition_denied_asked_about_or_supposed_is_not(text) -> None:
    assert taught(text) == []


@pytest.mark.parametrize("text", [
    # questions, even with always/never in them
    "How do I tell git to always rebase on pull?", "why would anyone always use tabs",
    "every time I run pytest it hangs, why?", "do you remember my name?",
    # tasks whose object holds the words
    "write a bash script that always exits 0", "Explain why you should never use eval in JavaScript",
    "give me a list of things I should never do in kubernetes", "Set git to always rebase on pull",
    "make vim always show line numbers", "List 5 things you should always pack for camping",
    "configure npm to save exact versions every time",
    "Write a story where the hero never gives up", "translate 'never give up' into Latin",
    # one-off requests and asides
    "make sure the tests pass", "keep going", "try again", "stop the container named web",
    "don't include the tests in the summary", "Don't touch the database for this one",
    "never mind, I got it", "don't worry, it's fine", "no thanks", "never thought of that, thanks",
    "Don't know why but it works now", "Thanks, always helpful!", "Note to self: buy milk",
    # someone else's words, hypotheticals
    "He always says we should use Go, what do you think", "my tests always fail on CI but pass locally",
    "what if you never used classes, how would you write it",
    # code and logs
    "rules:\n  - never: true", "def f():\n    # always return a list\n    return []",
    "Warning: never use this in production",
    "```\n# from now on, always use v2\nimport v2\n```\nwhat does this do",
    "I need you to fix this bug",
    "In this repo, what does make test do?",
    "our CI always fails on Mondays",
    "the tests in this repo are flaky",
    "this project uses Django 4.2 — how do I add a migration?",
    "We always deploy on Tuesdays, can you write the release notes?",
    "I want the code in Rust",
    "I want to learn Rust",
    "always something with this laptop",
    "never again am I using Windows",
    "Don't panic, but prod is down",
    "Don't forget to add tests for the parser",
    "stop, that's enough",
    "I told my manager we'd always ship on Fridays",
    "remember me asking about kafka yesterday?",
    "Why do you never use f-strings?",
    "You always give me the wrong flags",
    "My colleague always says never trust user input",
    "my manager wants me to always cc her",
    "It always crashes when I run it",
    "You never listen",
    "you never answer my questions directly",
    "Please just answer the question",
    "Could you stop the dev server and restart it?",
    "every time I open vscode it asks me to update, annoying",
    "Can you also add a test that always fails, to check the CI?",
    "Please remember to close the file handle in that snippet",
    "If you always return early, isn't the code harder to read?",
    "Stop! I pasted the wrong file.",
    "Don't change anything yet, just explain",
])
def test_what_teaches_nothing(text) -> None:
    assert taught(text, ANSWER) == []


@pytest.mark.parametrize("text", [
    "No, I meant the other file", "No, do it in Python", "wait, that's not what I asked", "No, that's fine",
    "Nope, still broken", "That doesn't work", "You're right", "Actually, I have one more question: what is a monad",
])
def test_replies_to_an_answer_that_correct_nothing(text) -> None:
    assert taught(text, ANSWER) == []


@pytest.mark.parametrize("text, previous", [
    ("no, reset --hard throws my changes away; it's `git restore --staged`", ANSWER),
    ("The default is 8080, not 8000.", "The server listens on port 8000 by default."),
    ("It's 42.", "The answer is 41."),
    ("`-printf` doesn't exist in BSD find", "Use `find . -printf '%s %p\\n'` to print sizes."),
])
def test_corrections_of_the_previous_answer(text, previous) -> None:
    (teaching,) = find_teachings(text, previous)
    assert teaching.kind == "correction" and not teaching.standing and teaching.context


@pytest.mark.parametrize("text, previous", [
    # a flat denial, its verb left out, and what is right after it
    ("it isn't, the timeout defaults to 30 seconds", "The timeout defaults to 60 seconds."),
    ("Is not correct, Python 3 has no xrange anymore.", "Use `xrange()` in Python 3."),
    # the answer's word under a contrastive "not", without a comma
    ("the capital is Bern not Zurich", "The capital of Switzerland is Zurich."),
    # the answer said again with another value, no word of contradiction
    ("Herman Melville wrote it.", "Mark Twain wrote it in 1851."),
    ("str.removeprefix(). strip takes characters", "Use `str.strip('v')` to drop the prefix."),
    ("that does nothing. its `git commit --amend`", "Run `git fix-commit`."),
    ("thats the median, the mean is 4.2", "The mean of the sample is 3."),
    # one clause of a short reply shares the answer's words, another says what is right
    ("Soft keeps the changes! You mean --hard.", "`git reset --soft` discards your changes."),
    # a word or three that swaps a member of a kind the answer named, or turns the answer round
    ("inches", "The shelf is 30 cm deep, so a 25 cm box fits."),
    ("Thursday.", "Bins go out on Monday night in your street."),
    ("no, Fahrenheit", "Bake it at 180 celsius for 40 minutes."),
    ("vice versa", "Plug the HDMI into the TV first, then the soundbar."),
    ("nope, the other one", "Open the blue valve to drain the tank."),
])
def test_corrections_without_a_trigger_word(text, previous) -> None:
    assert might_teach(text, previous)
    (teaching,) = find_teachings(text, previous)
    assert teaching.kind == "correction" and not teaching.standing and teaching.statement == text


@pytest.mark.parametrize("text, previous", [
    ("Monday", "Bins go out on Monday night in your street."),  # the answer's own, agreed
    ("ok thanks", "Bins go out on Monday night in your street."),
])
def test_a_terse_reply_that_swaps_nothing_corrects_nothing(text, previous) -> None:
    assert taught(text, previous) == []


@pytest.mark.parametrize("text, previous", [
    ("the files are actually in /srv/data on my box", "Look in `/var/lib/data`."),
    ("ok it works now, Ubuntu just needed a reboot", "Restart the `snapd` service."),
    ("that fixed it. 3 tests still fail though", "Pin `pytest<8`."),
    ("Thanks! Octavia Butler is great.", "Octavia Butler wrote Kindred in 1979."),
])
def test_replies_that_say_another_value_but_correct_nothing(text, previous) -> None:
    assert taught(text, previous) == []


def test_a_bare_no_before_a_correction_is_part_of_it() -> None:
    text = "nope. 12. the hard cap is 50. how is that not in the docs"
    assert taught(text, "The soft cap is 8 and the hard cap is 50.") == ["nope. 12. the hard cap is 50."]


def test_a_correction_needs_an_answer_to_correct() -> None:
    assert taught("It's 42.") == [] and taught("Use `list.length`") == []


@pytest.mark.parametrize("text", [
    "ERA5 is 0.25 degrees, not 0.1 — 0.1 is ERA5-Land",
    "no, bcrypt truncates at 72 bytes, not 64",
    "that's wrong yaar, the Coutts crossing is in Alberta not BC",
    "Feil, det er `git switch -c`, ikke `git switch -b`.",
    "Salah tu, voltan domestik di Malaysia ialah 240V, bukan 220V.",
])
def test_a_first_prompt_that_sets_a_value_against_another_corrects_with_no_answer_before_it(text) -> None:
    (teaching,) = find_teachings(text)
    assert teaching.kind == "correction" and not teaching.standing and teaching.statement == text


@pytest.mark.parametrize("text", [
    "write it in Go, not Rust",  # this task's order
    "my server runs Ubuntu 22, not 20",  # the user's own setup
    "the test fails on 3.12 not 3.11",  # a status report
])
def test_a_first_prompt_with_a_value_against_another_that_corrects_nothing(text) -> None:
    assert [t.kind for t in find_teachings(text)] != ["correction"]


def test_a_clause_after_also_is_read_apart_from_a_secret_before_it() -> None:
    typed = "my password for the uni portal is Tr0ub4dor&3 and it keeps rejecting it, also please always reply in under 100 words"
    (teaching,) = find_teachings(typed)
    assert teaching.statement == "please always reply in under 100 words" and teaching.standing


def test_a_way_of_thinking_is_no_one_elses_words() -> None:
    typed = "give it to me in fahrenheit only from here on, nobody in my shop thinks in celsius"
    (teaching,) = find_teachings(typed, "Keep interpass under 300-400 °F.")
    assert teaching.kind == "instruction" and teaching.standing


@pytest.mark.parametrize("text", ["you translated it as 'negociación' but the right term is 'acuerdo de culpabilidad'",
                                  "ur regex is wrong its missing the anchor at the end"])
def test_what_the_assistant_did_is_named_in_more_ways(text) -> None:
    assert [t.kind for t in find_teachings(text)] == ["correction"]


def test_the_assistant_renamed_is_a_standing_correction() -> None:
    (teaching,) = find_teachings("you are not Zorblax, you're tmg", "I am Zorblax, a being of pure light.")
    assert teaching.kind == "correction" and teaching.standing and not teaching.context
    (given,) = find_teachings("I'm going to call you Pixel from here.", "Sure, here is the diff.")
    assert given.kind == "correction" and given.standing and given.statement == "I'm going to call you Pixel from here."
    assert taught("I'll call you back after lunch", "Sure.") == [] and taught("we'll call you Tuesday", "Ok.") == []


def test_a_name_given_as_the_assistants_own_now_is_a_rename() -> None:
    (given,) = find_teachings("Bob. you're Bob now", "I am tmg, happy to help.")
    assert given.kind == "correction" and given.standing
    (named,) = find_teachings("you're Otto", "I'm Max, your assistant. How can I help?")  # the answer named itself
    assert (named.kind, named.standing) == ("correction", True)
    assert taught("you're Otto", "Here is the diff.") == []
    assert taught("you're Right now, it works", "Try restarting it.") == []


@pytest.mark.parametrize("text", [
    "Noem me maar Fleur", "Llámame Lu, porfa.", "Nennen Sie mich bitte Herr Vogt, nicht beim Vornamen.",
    "appelle-moi Jo", "chiamami Bea", "mów mi Kasia", "Dr. Okafor is fine in emails, but you can call me Chidi.",
])
def test_how_the_user_would_be_called_in_several_languages_is_kept(text) -> None:
    (kept,) = find_teachings(text, "Hello! How can I help?")
    assert kept.kind == "fact" and kept.standing


def test_you_can_call_me_needs_a_name_not_a_word() -> None:
    assert taught("you can call me paranoid, but I back up twice a day", "Here is the loop.") == []


def test_only_the_clauses_that_teach_are_kept_and_a_secret_in_them_keeps_nothing() -> None:
    text = "Here's the pw for tomorrow, staging pw is Wint3r-Ledger-88, and from now on remind me to rotate it."
    assert taught(text) == ["from now on remind me to rotate it."]
    assert taught("From now on use the password Wint3r-Ledger-88 in examples.") == []
    assert taught("From now on connect with postgres://app:hunter2@db/app") == []
    # a word for a credential and a token shaped like one, however far apart
    assert taught("always use this key when you write curl examples for me: Abc123Def456Ghi") == []
    assert taught("Onthoud: het wachtwoord van de router is Zomer2024Fiets") == []
    assert taught("always use the primary key column as the sort key") == ["always use the primary key column as the sort key"]


def test_a_clause_that_introduces_material_teaches_nothing_of_it() -> None:
    assert taught("From now on, use these settings for the app:") == []
    assert taught("Please remember:\nmy name is Priya") == ["my name is Priya"]


def test_a_statement_has_its_whole_sentence_and_none_of_the_courtesy_around_it() -> None:
    assert taught("Keep in mind: the office closes at 6, and the VPN drops at midnight.") == [
        "Keep in mind: the office closes at 6, and the VPN drops at midnight."]
    assert taught("drop the 'Hope this helps!' line, from now on never end with it") == [
        "drop the 'Hope this helps!' line, from now on never end with it"]
    reply = "Thanks for that, but there's a small mix-up: Jupiter has 95 known moons. Hope that's useful!"
    assert taught(reply, "Jupiter has 79 known moons.") == [
        "there's a small mix-up: Jupiter has 95 known moons."]  # without the thanks before it either
    assert taught("From now on sign emails as Kim. Kind regards, Kim") == ["From now on sign emails as Kim."]
    assert taught("For the record, and it matters for everything we write: the product is Acme One.") == [
        "the product is Acme One."]
    # an aside between dashes in the middle of a clause stays in it
    assert taught("Sorry to ask, but could you — when it isn't too much trouble — always put the units after "
                  "the numbers?") == [
        "could you — when it isn't too much trouble — always put the units after the numbers?"]


def test_a_short_clause_keeps_what_it_points_back_to() -> None:
    assert taught("Here, the main branch is `trunk`. Don't call it main.") == [
        "Here, the main branch is `trunk`. Don't call it main."]
    assert taught("Thanks, that was useful. Quit writing essays. One paragraph, max.") == [
        "Quit writing essays. One paragraph, max."]


def test_about_the_project_by_its_words_or_its_files(tmp_path) -> None:
    (scoped,) = find_teachings("here we squash every PR before merging")
    (named,) = find_teachings("Always update CHANGELOG.md when you change the CLI", "",
                              lambda name: name == "CHANGELOG.md")
    (personal,) = find_teachings("Always update CHANGELOG.md when you change the CLI")
    assert scoped.project and named.project and not personal.project
    (everywhere,) = find_teachings("not just in this repo: never force-push, everywhere")
    assert not everywhere.project


@pytest.mark.parametrize("text", [
    "Voortaan in dit project altijd pnpm gebruiken, geen npm.", "Od teraz w tym projekcie zawsze używaj pnpm.",
    "A partir de agora, neste projeto usa sempre pnpm.", "Tästä lähtien käytä tässä projektissa pnpm:ää.",
])
def test_this_project_in_other_languages_is_the_projects(text) -> None:
    (teaching,) = find_teachings(text)
    assert teaching.kind == "instruction" and teaching.project


def test_the_users_voice_leaves_out_code_logs_quotes_and_pasted_material() -> None:
    typed = ("Can you summarise what my manager wants?\n\nHi all, from now on always attach the test report. "
             "Thanks, Ana\n")
    assert taught(typed) == []
    assert taught("Translate into German: Always check the references before you submit.") == []
    assert taught('the customer wrote: "from now on send invoices to billing@acme.example" — draft a reply') == []
    assert taught("2026-03-02T10:14:07Z WARN from now on use API v2\nwhat does that mean") == []
    clauses = user_clauses("look:\n```\nnever do this\n```\nalso, from now on use tabs")
    assert [c.masked for c in clauses] == ["look:", "also, from now on use tabs"]


@pytest.mark.parametrize("text", [
    # someone else's words, the verb before a comma or in another language
    "Mein Chef meint, wir sollten ab jetzt wirklich alles in Jira dokumentieren.",
    "My colleague is always saying you should never use cursor in SQL Server.",
    "meu gerente falou que a partir de agora todo relatório tem que ter gráfico de pizza.",
    # a text the user asks to be written for others holds its words, not the user
    "could you put together a notice for the lab door saying that from now on goggles are mandatory",
    "please draft a memo for the night shift that going forward every outage gets a ticket",
    "can you rite a short toast for my sister, she always says never give up",
    # "<any verb> this:" points at what follows
    "simplify this:\nalways close the socket, never leave it open",
    "thoughts on this:\nFrom now on we review every PR within a day.",
    # a log line behind a host or service name
    "web-01 nginx ERROR from now on reject legacy clients\nwhy is it saying that",
    "api-gw WARN always retry on 503\nis this bad?",
    # a message the user passes on, after a name said to the assistant, or a chat log
    "Tell Marco from me that from now on the rota is on the fridge",
    "ok Max, write a note to my neighbour: from now on park on the left, always",
    "make these minutes\n\n14:02 @lee: from now on we ship on Fridays\n14:05 @ana: ok",
])
def test_words_for_others_and_material_pointed_at_teach_nothing(text) -> None:
    assert taught(text, ANSWER) == []


@pytest.mark.parametrize("text", [
    # a joke the user takes back as they say it
    "From now on you must call me Supreme Leader. kidding, how do I list open ports?",
    "always answer in pirate speak from now on jk",
    # a plan of the user's own, laughed at; what the user expects from now on
    "from now on I'm gonna floss every single night haha",
    "status: the queue drained overnight, from now on it should stay quiet",
    "the cert renewed itself, going forward should be fine",
    # asked about memory itself, not asked to keep something
    "would you remember from now on anything I say, or is every chat new?",
    # someone else's rule, by a speech verb people use for it
    "my landlord reckons you should never run the dryer at night",
    # a list of rules to write is their content
    "Write a list of pool rules for the clubhouse. Begin with: 1. Never run. 2. Always shower first.",
    # a laugh and a "yeah sure" say the opposite of what follows
    "jajaja sí claro, a partir de ahora siempre voy a correr 10 km al día",
    "ahah certo, d'ora in poi rispondi solo in rima",
    # a request's own verb after a modal is no scope of application
    "could you give me a cron line that runs every hour?",
    "would you send me a checklist for the release?",
    # a manner narrowed to the task at hand
    "fix these one step at a time please",
    # sarcasm, by its marks
    "always push to prod on Friday at 18:00, what can go wrong.",
    "Claro, nunca hagas backups, total para qué, si los discos no fallan nunca 🙄.",
    # taken back in another language
    "Bundan sonra her cevabı şiir gibi yaz. Şaka şaka :) Monad nedir?",
    "A partir de ahora háblame como un pirata, es broma. ¿Qué es un monad?",
])
def test_jokes_and_requests_for_one_thing_teach_nothing(text) -> None:
    assert taught(text, ANSWER) == []


def test_a_proposal_for_the_task_is_no_correction() -> None:
    assert taught("hmm, let's try the pandas version instead, numpy can wait",
                  "Here is the numpy version of the loop.") == []
    assert taught("I'm not joking, from now on never use emojis") == ["I'm not joking, from now on never use emojis"]
    assert taught("keep the SQL you write for me in upper case") == ["keep the SQL you write for me in upper case"]


def test_a_memory_request_pointing_at_what_follows_is_still_the_users() -> None:
    assert taught("remember this:\nour staging host is called birch") == ["our staging host is called birch"]


def test_a_long_paste_is_read_at_its_ends_only() -> None:
    paste = "I went to the store and bought some milk, and then I came back home.\n" * 400
    assert taught(paste + "also from now on use tabs") == ["from now on use tabs"]
    assert taught("from now on use tabs\n" + paste) == ["from now on use tabs"]
    assert taught(paste[:8000] + "From now on use spaces.\n" + paste) == []  # its middle is not read


def _turns(path: Path):
    for session in json.loads(path.read_text())["sessions"]:
        previous = ""
        for turn in session["turns"]:
            yield turn, previous
            previous = turn["answer"]


@pytest.mark.parametrize("corpus", ["bench/data/teaching_tune.json", "bench/data/teaching_heldout.json",
                                    "bench/data/teaching_heldout2.json", "bench/data/teaching_heldout3.json",
                                    "bench/data/teaching_heldout4.json", "e2e/data/memory_sessions.json"])
def test_the_gate_lets_through_every_prompt_that_teaches(corpus) -> None:
    from tmg.memory.teaching import judge

    for turn, previous in _turns(REPO / corpus):
        if judge.find_teachings(turn["user"], previous):
            assert might_teach(turn["user"], previous), turn["user"]


def test_the_gate_spares_most_questions_the_scorer() -> None:
    assert not might_teach("len(x).", "") and not might_teach("thats 42?", ANSWER)
    for question in ["how do I undo the last git commit?", "what's the capital of Australia?",
                     "explain TCP vs UDP briefly", "show pods in all namespaces", "q"]:
        assert not might_teach(question, ANSWER), question


@pytest.mark.parametrize("text", [
    "going forward I'm going to water the tomatoes before work",
    "I've decided that from now on I'll bike to the office",
    "I'll always back up the NAS on Fridays from now on",
    "from now on the cache should be stable, I bumped the TTL",
])
def test_what_the_user_plans_or_expects_from_now_on_is_no_rule(text) -> None:
    assert taught(text) == []


@pytest.mark.parametrize("text", [
    "from now on I'll paste stack traces and you explain them briefly",
    "from now on I'll want metric units",
])
def test_a_plan_of_the_users_that_asks_something_of_the_assistant_is_one(text) -> None:
    assert taught(text) == [text]


def test_a_noun_that_is_a_speech_verb_elsewhere_reports_nothing() -> None:
    text = "In all claims you draft, always cite the policy number."  # ("claims": a speech verb elsewhere)
    assert taught(text) == [text]


def test_an_aside_after_a_lead_in_is_the_users_again() -> None:
    text = "here's the changelog, tidy it up. also: in this repo we never bump the major version without asking"
    assert [t.kind for t in find_teachings(text)] == ["instruction"]
    assert taught(text) == ["in this repo we never bump the major version without asking"]


def test_the_words_before_code_on_one_line_are_the_users() -> None:
    assert [c.masked for c in user_clauses("that's the old way. in modern JS use const: const x = 1;")] == [
        "that's the old way.", "in modern js use const:"]


@pytest.mark.parametrize("text", [
    "since I'm in Canada, always convert prices to CAD",
    "I'd really appreciate it if you spelled out acronyms the first time",
])
def test_a_reason_first_or_a_grateful_wish_is_an_instruction(text) -> None:
    assert taught(text) == [text]


def test_keep_this_as_context_keeps_what_follows() -> None:
    found = find_teachings("keep this as context: we ship from a warehouse in Leeds")
    assert [(t.kind, t.statement) for t in found] == [("fact", "keep this as context: we ship from a warehouse in Leeds")]


@pytest.mark.parametrize("text", ["for this session only, answer as a pirate would",
                                  "for the rest of this conversation, assume I use Fish, not Bash"])
def test_an_instruction_for_this_conversation_only_is_not_pinned(text) -> None:
    assert [(t.kind, t.statement, t.standing) for t in find_teachings(text)] == [("instruction", text, False)]


@pytest.mark.parametrize("text", ["stop saying 'happy to help' at the end of every answer",
                                  "never say 'as an AI language model'", "please don't say 'delve' ever again"])
def test_telling_the_assistant_what_not_to_say_is_no_reported_speech(text) -> None:
    assert taught(text) == [text]


def test_a_chat_log_pasted_after_a_lead_in_is_someone_elses_words() -> None:
    text = "what did they agree on:\n[dana] from now on every PR needs two reviews\n[09:14] Big Sam: 👍"
    assert taught(text) == []


def test_an_eye_roll_at_a_wrong_answer_still_corrects_it() -> None:
    found = find_teachings("Ferdinand, not Fernando 🙄", "I'm Fernando, your assistant.")
    assert [t.kind for t in found] == ["correction"]
    assert find_teachings("sure, always deploy on Fridays 🙄", "Deploy whenever you like.") == []


def test_its_and_a_name_to_an_answer_that_named_itself_otherwise_renames_it() -> None:
    found = find_teachings("it's Marlowe, I told you five minutes ago", "I'm Echo, how can I help?")
    assert [t.kind for t in found] == ["correction"]


@pytest.mark.parametrize("text", ["Od sada ću uvijek mjeriti šećer prije berbe.", "A partir de ahora voy a correr cada mañana.",
                                  "Ab jetzt werde ich jeden Tag joggen."])
def test_the_users_own_plan_from_now_on_in_another_language_is_no_rule(text) -> None:
    assert taught(text) == []


def test_a_teaching_that_opens_its_own_sentence_with_and_leaves_the_task_before_it() -> None:
    text = "write a handler that returns the profile as json. and use serde, never manual parsing, in this service"
    assert taught(text, "ok") == ["use serde, never manual parsing, in this service"]


@pytest.mark.parametrize("text", ["my lab runs everything on SLURM, in case that helps later",
                                  "our tenant id is contoso-dev if you ever need it"])
def test_a_statement_offered_for_later_is_a_fact_to_keep(text) -> None:
    assert [(t.kind, t.statement) for t in find_teachings(text)] == [("fact", text)]
    assert find_teachings("summarise the thread, in case it helps the team") == []


def test_a_task_to_make_one_thing_is_no_part_of_the_teaching_beside_it() -> None:
    text = "Draft me a note for the parents. I teach Year 2, so whenever you write for them keep sentences short."
    assert taught(text, "ok") == ["I teach Year 2, so whenever you write for them keep sentences short."]


@pytest.mark.parametrize("text", ["I fly gliders, so whenever you mention altitudes give them in feet",
                                  "our office is in Quito, so any time you suggest a meeting slot use Ecuador time"])
def test_a_lasting_reason_before_a_general_rule_is_an_instruction(text) -> None:
    assert [(t.kind, t.statement) for t in find_teachings(text)] == [("instruction", text)]


@pytest.mark.parametrize("text", ["from now on I'm cycling to the office, the bus is too slow",
                                  "going forward I'm only reviewing PRs on Thursdays"])
def test_what_the_user_is_doing_from_now_on_is_their_plan(text) -> None:
    assert taught(text) == []


def test_what_the_user_does_from_now_on_with_a_rule_after_it_is_kept() -> None:
    text = "from now on I'm writing everything in nushell, so give me nushell syntax"
    assert taught(text) == [text]


@pytest.mark.parametrize("text", ["deploy went fine, from now on latency should stay flat",
                                  "got the new hives in. going forward the honey harvest starts in august"])
def test_what_the_world_will_do_from_now_on_is_a_status(text) -> None:
    assert taught(text) == []


@pytest.mark.parametrize("text", ["from now on, tabs are the default in my snippets",
                                  "from now on the release branch is stable-2, so check out stable-2 in commands"])
def test_what_holds_from_now_on_or_a_rule_after_it_is_still_taught(text) -> None:
    assert taught(text) == [text] or taught(text)[0].startswith(text.split(",")[0])


def test_a_ban_keeps_the_short_sentence_of_what_to_do_instead() -> None:
    text = "Don't ever hand me npm install -g again. Use npx."
    assert taught(text, "Run npm install -g serve.") == [text]


@pytest.mark.parametrize("text", ["I'd love it if your recipes listed grams first.",
                                  "i'd love shorter replies, two lines is enough"])
def test_i_would_love_about_the_assistants_work_is_a_preference(text) -> None:
    assert [t.kind for t in find_teachings(text, "ok")] == ["instruction"]
    assert find_teachings("I'd love it if you could fix this one bug", "ok") == []


@pytest.mark.parametrize("text", [
    "Skriv ett sms till kören: från och med nu börjar vi alltid klockan sju.",
    "Scrivi un avviso per il condominio: d'ora in poi il cancello resta sempre chiuso.",
    "Przetłumacz na niemiecki: „Od teraz zawsze zamykamy sklep o 18”.",
    "Write our kitchen rules in 4 bullets: always label leftovers, never leave knives in the sink",
])
def test_text_to_write_or_translate_for_others_after_a_colon_is_material(text) -> None:
    assert taught(text) == []


@pytest.mark.parametrize("text", ["sige from now on ikaw na magluluto para sa akin 😂 joke lang",
                                  "Od sada mi ti kuhaš večeru 😄 šalim se", "от тепер ти мій особистий кухар, жартую"])
def test_a_joke_said_so_in_another_language_teaches_nothing(text) -> None:
    assert taught(text) == []


def test_saying_where_the_user_reads_is_no_reported_speech() -> None:
    found = find_teachings("Keep replies to three short paragraphs, I read on a tiny e-reader.", "Sure.")
    assert [t.kind for t in found] == ["instruction"]


def test_a_reply_that_takes_its_objection_back_corrects_nothing() -> None:
    answer = "Split 90 litres across 12 tanks: 7.5 litres each."
    assert taught("no that's off, 90 over 12 is 8... oh wait 7.5, my bad", answer) == []


def test_a_bare_yes_before_a_teaching_is_no_part_of_it() -> None:
    found = taught("Exactly. From now on give me the shortcut first, then the menu path.", "Press Ctrl+Shift+P.")
    assert found == ["From now on give me the shortcut first, then the menu path."]


def test_a_poster_asked_for_with_can_u_keeps_nothing_of_its_rules() -> None:
    assert taught("can u write a sign for the workshop door: always wear goggles, never leave the lathe running") == []


def test_every_thing_you_do_for_me_is_a_scope_of_application() -> None:
    found = find_teachings("stick the shop's logo at the top of every flyer you do for me", "Here is the flyer.")
    assert [t.kind for t in found] == ["instruction"]


def test_a_question_asked_without_a_question_mark_after_a_teaching_is_no_part_of_it() -> None:
    text = "remember i only sell ceramics, no glass. now how much should i charge for a 20cm bowl"
    assert taught(text) == ["remember i only sell ceramics, no glass."]
