"""What one typed prompt teaches: each clause of the user's own voice judged by its structure.

A clause teaches when it is
- an **instruction**: addressed to the assistant (an imperative, "please", a modal request, a
  preference, a conditional "when I ..., do ...") and standing (a scope in time, a habitual
  always/never/don't, a change of habit "stop ...", a scope of application "in every answer",
  a project rule "in this repo ..."), and not one-off ("for now", "in this refactor");
- a **fact to keep**: a memory request ("remember that ...", "keep in mind ...");
- a **correction** of the previous answer: a contradiction ("no, ...", "X, not Y", "doesn't
  exist", "the real one is ...") that bears on that answer (it opens the reply, shares words or
  a number with the answer, or points at what the assistant said), or a correction of the name
  the assistant gave itself.
Nothing is learned from a question (unless it is a request: "could you stop ...?"), a
hypothetical, reported speech, an aside ("don't worry about it"), or a revision of the current
task ("actually, use a dict instead"). What is learned is the clauses that carry it (with a
short clause's antecedent: "Don't call it main" keeps "the main branch is trunk"), never the
whole prompt; a statement that looks like it holds a secret is not learned at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from tmg.memory.teaching import cues, forms, learned, lexicon, manner, outlook, speech, syntax
from tmg.memory.teaching.condition import condition
from tmg.memory.teaching.correction import (CORRECTION, FACT, INSTRUCTION, Answer, Verdict, concedes, correction,
                                            proposes, renames_assistant, tokens)
from tmg.memory.teaching.phrases import PUNCTUATION, Words
from tmg.memory.teaching.secret_like import looks_secret
from tmg.memory.teaching.extent import groups
from tmg.memory.teaching.segment import Clause, mask, user_clauses

# Of a long prompt only this much of each end is read: a teaching is typed before or after a
# paste, not buried in its middle.
EDGE_CHARS = 8_000
# Of a long text only the clauses at its two ends are judged: a teaching typed with a paste
# comes before or after it, and the cost stays bounded (~0.1 ms a clause).
EDGE_CLAUSES = 20
# A bare task ("make it shorter") is at most three words and this many letters.
BARE_TASK_CHARS = 24
# A statement is one teaching, a sentence or a few: longer is a document, never pinned.
MAX_STATEMENT_CHARS = 400
# A correction of the previous answer that is this short is taken whole ("NO. That throws away
# my changes! It's `git restore --staged`.").
SHORT_REPLY_SENTENCES, SHORT_REPLY_CHARS = 3, 300
_CONTRAST = re.compile(r"\b(?:but|though|although|however|actually|except|mais|aber|pero|ma|maar|mas)\b")
_WORD = re.compile(r"[\w'./-]+|`[^`]+`")


class Teaching(NamedTuple):
    """One thing the user taught, in their own words."""

    kind: str  # instruction, correction or fact
    statement: str  # the user's words, as typed
    standing: bool  # holds from now on (pinned), not only when its topic comes up
    project: bool  # about the project this was typed in, not the user everywhere
    context: str = ""  # a correction's subject: the sentence of the previous answer it corrects
    cues: tuple[str, ...] = ()  # why (for --debug and the bench)


def find_teachings(typed: str, previous_answer: str = "",
                   project_name: Callable[[str], bool] = lambda _name: False) -> list[Teaching]:
    """What `typed` (the user's own typed words, never piped or attached text) teaches.

    `previous_answer`: the assistant's answer just before it (corrections are relative to it).
    `project_name`: whether a word names a file of the project the prompt was typed in (an
    instruction naming one is about the project)."""
    read = _read(typed, previous_answer)
    if read is None or not any(read.verdicts):
        return []
    out = []
    for group in groups(read.clauses, read.verdicts, read.typed, read.short_reply):
        teaching = _teaching(group, read.clauses, read.verdicts, read.typed, read.answer, project_name)
        if teaching is not None and all(t.statement != teaching.statement for t in out):
            out.append(teaching)
    return out


def clause_features(typed: str, previous_answer: str = "") -> list[tuple[Clause, list[str], bool]]:
    """What the learned reading sees of each clause no veto rules out, and whether a rule already
    judged it a teaching (bench/train_teaching.py trains on these)."""
    seen: list[tuple[Clause, list[str], bool]] = []
    _read(typed, previous_answer, lambda clause, feats, ruled: seen.append((clause, feats, ruled)))
    return seen


class _Read(NamedTuple):
    typed: str
    clauses: list[Clause]
    answer: Answer
    short_reply: bool
    verdicts: list[Verdict | None]


def _read(typed: str, previous_answer: str,
          record: Callable[[Clause, list[str], bool], None] | None = None) -> _Read | None:
    """Each clause of the user's voice in `typed` and its verdict (None: it teaches nothing)."""
    if not typed or not typed.strip():
        return None
    if len(typed) > 2 * EDGE_CHARS:
        typed = typed[:EDGE_CHARS] + "\n\n" + typed[-EDGE_CHARS:]
    clauses = user_clauses(typed)
    if not clauses:
        return None
    answer = Answer(previous_answer)
    short_reply = (clauses[-1].sentence - clauses[0].sentence < SHORT_REPLY_SENTENCES
                   and clauses[-1].end - clauses[0].start <= SHORT_REPLY_CHARS)
    reply = typed[clauses[0].start:clauses[-1].end] if short_reply else ""
    judged = range(len(clauses))
    if len(clauses) > 2 * EDGE_CLAUSES:
        judged = [*range(EDGE_CLAUSES), *range(len(clauses) - EDGE_CLAUSES, len(clauses))]
    verdicts: list[Verdict | None] = [None] * len(clauses)
    # A prompt that asks something: what it states is context for the question, not a rule to keep.
    # A request ("kun je deze functie herschrijven ...?") asks for work, not for an answer.
    requests = {c.sentence for c in clauses if forms.request_start(Words(c.masked))}
    asks = any(forms.asks(c.masked) and c.sentence not in requests for c in clauses)
    # A short reply that opens by contradicting the answer corrects it: its "no X" is no ban.
    contradicting = bool(reply and answer.text and forms.CONTRA_LEAD.match_at(Words(clauses[0].masked), 0))
    for index in judged:
        clause = clauses[index]
        verdicts[index] = _judge(clause, index == 0, typed, answer, reply,
                                 index > 0 and clauses[index - 1].paragraph == clause.paragraph
                                 and forms.about_project(Words(clauses[index - 1].masked))
                                 and not forms.NEXT_STEP.match_at(Words(clause.masked), 0), asks, contradicting,
                                 record)
    return _Read(typed, clauses, answer, short_reply, verdicts)


def _judge(clause: Clause, first: bool, typed: str, answer: Answer, reply: str,
           after_project: bool = False, asks: bool = False, contradicting: bool = False,
           record: Callable[[Clause, list[str], bool], None] | None = None) -> Verdict | None:
    """`reply`: the whole of a short reply (as typed), "" for a longer prompt; `after_project`: the
    clause before it (same paragraph) was about the project ("Here, the main branch is trunk.
    Don't call it main."); `record`: told what the learned reading would see of a clause no veto
    rules out (training)."""
    if typed[clause.start:clause.end].endswith(":"):
        return None  # "from now on, use these settings:": it points at material, it holds none
    words = Words(clause.masked)
    body = clause.masked
    opener = _discourse(words)
    if opener:
        body = " ".join(clause.masked.split()[opener:]) if opener < len(words) else ""
        words = Words(body)
    syntax.close_subordinate(words)
    if not words or forms.hypothetical(words) or forms.ASIDE.find(words) >= 0 or speech.reported(words):
        return None
    if outlook.expects(words):
        return None  # "going forward it should be fine", "going forward I'll ...": a status, a plan
    if forms.joking(typed[clause.start:clause.end + 16]):
        return None  # a joke, said so in the clause or right after it
    # Sarcasm, by its marks; but an eye-roll at a wrong answer is impatience with it, and what
    # the reply says instead can still correct it ("Juniper, not Juno 🙄").
    sarcasm = forms.sarcastic(typed[clause.start:clause.end + 60])
    if sarcasm and not (reply and answer.text and forms.eye_roll_only(typed[clause.start:clause.end + 60])):
        return None
    question = forms.asks(body) or "¿" in body or (forms.question_start(words) and not forms.denial(words))
    request = forms.request_start(words)
    if question and (not request or forms.NOT_MEMORY.find(words) >= 0 or forms.offers_alternative(words)):
        return None  # a question teaches nothing, even with "always" in it, nor one about memory itself
    signals: list[str] = ["thanked"] if reply and answer.text and _thanks(reply) else []
    verdict = _by_rule(clause, words, body, first, typed, answer, reply, request, after_project, asks,
                       contradicting, signals)
    if sarcasm:
        return verdict if verdict is not None and verdict.kind == CORRECTION else None
    feats = None  # computed once, for training and the learned reading alike
    if record is not None:
        feats = _features(clause, typed, first, reply, answer, signals)
        record(clause, feats, verdict is not None)
    # No rule for it: the learned reading, unless a rule ruled it out (a one-off, "for this email
    # only"; what a task is about, "set git to always rebase"; courtesy or praise; a proposal,
    # "let's try ..."; what the task must be, "keep in mind this has to run on 3.8"; one thing to
    # make, with no habit in it, "Necesito un modelo de carta ..."). Beside a
    # question what a clause states is most often its context, and the reading weighs that
    # ("asks"), but "I teach Year 9 ... What's a good way into ...?" still says who the user is.
    if verdict is None and not forms.courtesy(words) and not proposes(words) \
            and not forms.task_constraint(words) and not {"one-off", "task object"} & set(signals) \
            and not (cues.makes_one(words) and not any(s.startswith("s:") for s in signals)):
        if feats is None:
            feats = _features(clause, typed, first, reply, answer, signals)
        read = learned.reading(feats)
        if read == FACT and ("please" in feats or lexicon.REMINDING.find(words) >= 0):
            read = INSTRUCTION  # "please", "remember to" ask for something done; a fact is told
        if read is not None:
            return Verdict(read, read == FACT or (read == INSTRUCTION and not cues.this_chat(words)), ("learned",))
    return verdict


def _by_rule(clause: Clause, words: Words, body: str, first: bool, typed: str, answer: Answer, reply: str,
             request: bool, after_project: bool, asks: bool, contradicting: bool,
             signals: list[str]) -> Verdict | None:
    """What the cues say of a clause no veto ruled out; `signals` is told the instruction cues seen."""
    if forms.memory_request(words) or (forms.offered(words) and not cues.is_verb(words[0])):
        return Verdict(FACT, True, ("memory request",))  # (not a task offered: "explain it, in case it helps")
    said = typed[clause.start:clause.end]
    if forms.NAMING.find(words) >= 0 or forms.CALL_YOU.search(said) or forms.YOU_ARE_NOW.search(said) \
            or (answer.self_names and renames_assistant(body, words, answer, said)):
        return Verdict(CORRECTION, True, ("assistant's name",))
    if forms.USER_NAME.starts(words) or forms.ADDRESS_ME.find(words) >= 0 or forms.CALL_ME.search(said):
        return Verdict(FACT, True, ("user's name",))
    if forms.defines_terms(words):
        return Verdict(INSTRUCTION, True, ("what the user's words mean",))
    found = _instruction_cues(words, request, after_project, asks, contradicting, signals)
    if found is not None:
        return Verdict(INSTRUCTION, not cues.this_chat(words), found)  # (for this chat only: not pinned)
    if condition(words):
        return Verdict(FACT, True, ("condition",))  # said in passing too, even beside a question
    return correction(body, words, first, typed[clause.start:clause.end], answer, reply)


def _thanks(reply: str) -> bool:
    """A short reply that opens with thanks or praise and turns on nothing ("Thanks! Octavia
    Butler is great."), or takes its objection back ("... sorry you right"): it corrects nothing."""
    return (forms.courtesy(Words(mask(reply))) and not _CONTRAST.search(reply.lower())) or concedes(reply)


def _features(clause: Clause, typed: str, first: bool, reply: str, answer: Answer, signals: list[str]) -> list[str]:
    return learned.features(clause.masked, typed[clause.start:clause.end], first, bool(reply),
                            answer.stems if answer.text else None, signals)


def _discourse(words: list[str]) -> int:
    """How many words at the start only open the clause ("ok so btw")."""
    at = 0
    while at < len(words):
        length = cues.DISCOURSE.match_at(words, at)
        if not length or forms.MEMORY.match_at(words, at) > length:
            break  # ("just so you know" is no "just" and "so")
        at += length
    return at


def _instruction_cues(words: Words, request: bool, after_project: bool = False, asks: bool = False,
                      contradicting: bool = False, signals: list[str] | None = None) -> tuple[str, ...] | None:
    """The cues that make a clause a standing instruction, or None; `signals` is told every cue
    seen, and what ruled one out (features of the learned reading)."""
    cut = cues.task_object_start(words)
    if cut is not None:
        words = _prefix(words, cut)  # "explain why you should never ...": the rest is the task's object
    strong = cues.STRONG_TIME.find(words) >= 0 or lexicon.this_chat_marked(" ".join(words))
    for phrases in (cues.STRONG_TIME, forms.PROJECT):  # "in this repo run ...", "from now on use ...":
        for index in phrases.finditer(words):         # a verb right after them stands as after a comma
            words.breaks.add(index + phrases.match_at(words, index))
    negative = cues.negative_imperative(words)
    prohibition = cues.prohibition(words)
    directive = {
        "imperative": cues.imperative(words) or syntax.opened_imperative(words),
        "don't/never": negative,
        "prohibition": prohibition,
        "request": request,
        "please": cues.POLITE.find(words) >= 0,
        "preference": cues.PREFERENCE.find(words) >= 0 or cues.wants_from_assistant(words),
        "addressed": cues.ADDRESSED_MODAL.find(words) >= 0,
    }
    project = after_project or forms.about_project(words)
    standing = {
        "from now on": strong,
        "always/never": _assistant_habit(words),
        "change of habit": cues.habit_change(words, _ends(words, cues.ADDRESSED_MODAL, forms.REQUEST)),
        "preference": directive["preference"],
        "when ..., do": cues.conditional(words),
        "every answer": manner.generic(words),
        "style": manner.style(words),
        "project rule": project,
        "don't/never": (negative and (not cues.definite_object(words) or _ends_in_habit(words))) or prohibition,
        # a lasting reason of the user's before the rule: "I play bass, so when we talk songs just give me roots"
        "reason first": cues.reason_first(words, general=True) and not asks,
    }
    one_off = forms.ONE_OFF.find(words) >= 0 or lexicon.one_off_marked(" ".join(words))
    if signals is not None:
        signals += [f"d:{k}" for k, v in directive.items() if v] + [f"s:{k}" for k, v in standing.items() if v]
        # "stop!", "keep going": a task, no habit (three words, not three runs of a script written
        # without spaces, nor a short one with a when or an always in it: "写SQL的时候请用大写关键字")
        joined = " ".join(words)
        habit = lexicon.habit(words, joined)
        bare = len(words) <= 3 and sum(map(len, words)) <= BARE_TASK_CHARS and not any(standing.values()) \
            and not habit and not lexicon.when(joined)
        others = not standing["always/never"] and cues.WEAK_TIME.find(words) >= 0  # "set git to always rebase"
        signals += ["s:habit word"] * habit + ["s:reason first"] * (not standing["reason first"] and cues.reason_first(words))
        signals += ["not the assistant's habit"] * others + ["one-off"] * one_off + ["task object"] * (cut is not None) + ["asks"] * asks + ["bare task"] * bare
    if one_off and not strong:
        return None  # "don't run the migrations yet", "in this refactor"
    said = tuple(k for k, v in directive.items() if v) + tuple(k for k, v in standing.items() if v)
    if contradicting and [k for k, v in directive.items() if v] == ["prohibition"]:
        return None  # "no. no default TTL unless ...": a correction, judged below
    if any(directive.values()) and any(standing.values()):
        return said
    if (strong or standing["reason first"]) and not cues.third_person(words):
        return said  # (a reason first holds its rule's verb: "..., so whenever you talk menus assume a Z6")
    if (project or cues.quantified(words)) and cues.RULE.find(words) >= 0 and not asks:
        return said + ("rule",)
    return None


def _ends(words: Words, *phrases) -> list[int]:
    """Where each match of `phrases` ends: a request's or an address's verb comes next."""
    return [i + p.match_at(words, i) for p in phrases for i in p.finditer(words)]


def _ends_in_habit(words: Words) -> bool:
    """"... ever again", "... anymore": a "don't" about what the assistant keeps doing."""
    return bool(words) and (words[-1] in ("again", "anymore") or words[-2:] == ["any", "more"])


def _prefix(words: Words, end: int) -> Words:
    cut = Words(" ".join(words[:end]))
    cut.breaks = {i for i in words.breaks if i < end}
    return cut


def _assistant_habit(words: Words) -> bool:
    """An always/never/whenever that qualifies what the assistant does (see cues.HABIT_OPENERS)."""
    led_by_verb = bool(words) and cues.is_verb(words[0])
    addressed = cues.ADDRESSED_MODAL.find(words)
    for index in cues.WEAK_TIME.finditer(words):
        if 0 <= addressed < index and not led_by_verb:
            return True  # "je veux que tu répondes toujours", "I need you to ... always"
        if index in words.breaks:
            return True  # first, or after a comma: "always use ...", "use const and let, always"
        previous = words[:index]
        last = previous[-1]
        if last in cues.HABIT_OPENERS and not (led_by_verb and last in ("you", "u") and len(previous) > 2):
            return True
        if last in cues.MODALS and len(previous) >= 2 and previous[-2] in ("you", "u") \
                and not (led_by_verb and len(previous) > 3):
            return True  # "you should always", but not "list things you should always pack"
        if last == "to" and len(previous) >= 2 and (previous[-2] in ("you", "u", "me") or cues.is_verb(previous[-2])):
            return True  # "I'd like you to always", "try to always", not "set git to always"
        if cues.is_verb(last) and len(previous) <= 2:
            return True  # "give always", "respóndeme siempre", "n'utilise jamais"
        if words[index] == "whenever" or (len(previous) <= 3 and last in ("me", "it", "them")):
            return True
        if index + cues.WEAK_TIME.match_at(words, index) == len(words) and _verb_led(words, index):
            return True  # "..., so give them next to the grams every time"
    return False


def _verb_led(words: Words, index: int) -> bool:
    """The part of the clause `index` stands in opens with a verb, and neither a subject nor a
    verb of something else ("set git to rebase ...") follows it."""
    start = max((s for s in cues.clause_starts(words) if s < index), default=None)
    if start is None or not cues.is_verb(words[start]) or cues.SUBJECTS & set(words[start:index]):
        return False
    return not any(w == "to" and cues.is_verb(words[i + 1]) for i, w in enumerate(words[start:index - 1], start))


def _teaching(group: list[int], clauses: list[Clause], verdicts: list[Verdict | None], typed: str,
              answer: Answer, project_name: Callable[[str], bool]) -> Teaching | None:
    chosen = [verdicts[i] for i in group if verdicts[i] is not None]
    carrying = [i for i in group if verdicts[i] is not None]
    statement = _words(typed, clauses, group)
    if looks_secret(statement) or len(statement) > MAX_STATEMENT_CHARS:
        statement = _words(typed, clauses, carrying)  # without the clauses around it
        if looks_secret(statement) or len(statement) > MAX_STATEMENT_CHARS:
            return None
    if any("memory request" in v.cues for v in chosen):
        statement = _announced(statement)
    kinds = {v.kind for v in chosen}
    kind = INSTRUCTION if INSTRUCTION in kinds else FACT if FACT in kinds else CORRECTION
    standing = any(v.standing for v in chosen)
    masked = Words(" ".join(clauses[i].masked for i in group))
    project = (forms.about_project(masked) or _names_project_file(statement, project_name)) \
        and forms.PERSONAL.find(masked) < 0
    context = ""
    if kind == CORRECTION and not standing and answer.text:
        context = answer.sentence_about(tokens(statement))
    return Teaching(kind, statement, standing, project, context,
                    tuple(dict.fromkeys(c for v in chosen for c in v.cues)))


# A memory request before a colon longer than this is a preamble, not part of what it keeps.
PREAMBLE_WORDS = 4


def _announced(statement: str) -> str:
    """What a memory request announces: a short request stays with it ("Merk dir bitte: unser
    Release ist ..."), a preamble does not ("Just so you know for later, and this matters a lot
    for anything you draft: the company is called Northwind" keeps "the company is ...")."""
    colon = statement.find(": ")
    lead = Words(mask(statement[:colon])) if colon > 0 else Words("")
    if len(lead) > PREAMBLE_WORDS and statement[:colon].count("`") % 2 == 0 and forms.memory_request(lead):
        return statement[colon + 2:].strip() or statement
    return statement


def _words(typed: str, clauses: list[Clause], group: list[int]) -> str:
    """The group's span of the typed text, without the discourse words that open it."""
    text = typed[clauses[group[0]].start:clauses[group[-1]].end].strip()
    spans = [(m.start(), m.group(0).strip(PUNCTUATION).lower().replace("’", "'")) for m in re.finditer(r"\S+", text)]
    at = _discourse([word for _, word in spans])
    return text[spans[at][0]:].strip() if 0 < at < len(spans) else text


def _names_project_file(statement: str, project_name: Callable[[str], bool]) -> bool:
    for word in _WORD.findall(statement):
        name = word.strip("`'\".,;:()").removesuffix("'s")
        if ("." in name or "/" in name or name[:1].isupper()) and len(name) >= 3 and project_name(name):
            return True
    return False
