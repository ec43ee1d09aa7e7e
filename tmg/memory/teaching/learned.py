"""A small learned reading of a clause, for what the structural cues have no rule for.

The cues (`judge`) were written class by class, and each blind held-out part showed the same
thing: a voice the rules had not met (a wish with no time cue, a reason first, code-mixed
lines, a terse correction) was missed. This is a linear model over the clause's words, their
character 4-grams (which carry across languages: "sempre", "altijd", "toujours") and a few
facts of its place (first of a short reply to an answer, words shared with that answer), with
four outcomes: nothing, instruction, correction, fact. It runs only on a clause every rule
passed over and no veto ruled out (a question, a hypothetical, a joke, reported speech), fires
only above `THRESHOLD`, and only in the shape its kind needs (`supported`), so the rules keep
their precision.

The weights are `learned_model.json` (read once, ~6 ms), written by `bench/train_teaching.py`
from the labelled corpora (bench/data); the bench scores each part with a model trained without
it. Scoring is a few dictionary lookups per feature: no dependency.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

from tmg.memory.teaching import lexicon
from tmg.memory.teaching.phrases import FUNCTION_WORDS, MARKS, OTHER_FUNCTION_WORDS, stem, unspaced_pairs

MODEL = Path(__file__).with_name("learned_model.json")
OUTCOMES = ("none", "instruction", "correction", "fact")
THRESHOLD = 0.6  # the model's probability that the clause teaches, to fire
WISH = 0.8  # an English wish with no directive, subject or verb (the model is this sure)
SURE = 0.97  # an English directive with no standing cue, when the model is this sure it is one
# In another language, where fewer standing cues are known, a directive needs less to be one.
SURE_ELSEWHERE = 0.85
# An English clause led by a subject, or with a finite verb of its own, states something; one
# without ("bullet points > paragraphs for me", "tldr first then details") can only be a wish.
SUBJECTS = frozenset("i i'm im i'll ill i've ive you you're youre u it it's its he she they we my our this that "
                     "there the everything nothing".split())
FINITE = frozenset("is are was were am be been being do does did doesn't didn't isn't aren't wasn't weren't have has "
                   "had will would can could should shall may might must won't can't couldn't wouldn't don't "
                   "dont".split())
WANTS = frozenset("want like prefer need love rather".split())
QUANTIFIERS = frozenset("every all any each always whenever anything everything".split())
HOUSE = frozenset("we we're here".split())  # how things are done here: a convention, said as a fact
PRONOUNS = frozenset("i i'm im i'll i've i'd you you're u it it's he she they we we're they're".split())
CONDITIONS = frozenset("when whenever if unless once before after until".split())
# A pronoun after these heads a relative clause of a wish, not its subject ("no nuts in anything
# you suggest, ever", "whatever you write for me").
NOT_SUBJECT_AFTER = CONDITIONS | frozenset("anything everything whatever whichever nothing something all any every".split())
# Common English words beyond the function words, so a short English clause is known as English.
COMMON = SUBJECTS | FINITE | frozenset("i'd you'll you've we're they're don't know think want need make like go going get "
                                      "right wrong good better fine great work works working now time next still "
                                      "again back thing things way much many well ok okay yeah please thanks "
                                      "can't won't let's".split())

_NAME = re.compile(r"(?<=\S )[A-ZÀ-ÞĀ-Ž][\w-]+|\b[A-Z]{2,}\b")
_LETTER = f"(?:[^\\W_]|[{MARKS}])"
_TOKEN = re.compile(f"‹[qc]›|{_LETTER}+(?:['’]{_LETTER}+)?|[=<>→%$€£#@]")
# A command-line option is code: "--soft", "use -n not -i".
_OPTION = re.compile(r"(?<!\S)--?[a-z][\w-]*")
_STATUS = frozenset("still works worked working fixed fail fails failing failed breaks broke broken crashes crashed".split())
_CONTRA = frozenset("no nope nah not wrong actually but instead isn't doesn't didn't".split())
# "always something with this laptop", "every time someone ...": a complaint, not a wish.
_COMPLAINT = re.compile(r"\b(?:always|every time|each time)\s+(?:something|someone|somebody)\b")
# A lead and what follows it in one clause: a text to write, a list, a label.
_COLON = re.compile(r"\S:\s+\S")
# "we use RTT, not uart", "ARSO, ne yr.no", "in.kiranamart.partner not the com one": one value put
# in place of another; a "not" after a verb, an auxiliary or a pronoun negates it ("I do not know",
# "that's not what I asked").
_NOT = re.compile(r"(,?)\s+(?:not|ne|nicht|pas|non|nie|não|niet|inte|ikke|не|ні)\s+\S")
_NEGATES = FINITE | PRONOUNS | SUBJECTS | frozenset("please pls why or and but just".split())

Weights = dict[str, list[float]]


def features(masked: str, said: str, first: bool, reply: bool, answer_stems: set[str] | None,
             signals: list[str]) -> list[str]:
    """What the model sees of one clause: `masked` (lower-cased, quotes and code masked), `said` (as
    typed, for its names), whether it opens the prompt, whether the prompt is a short reply to an
    answer, that answer's stems (None with no answer before it), and the structural cues the rules
    saw in it (`signals`: judge._instruction_cues)."""
    words = _TOKEN.findall(masked)
    out = ["bias", f"len:{min(len(words), 16) // 4}", *(f"sig:{s}" for s in signals)]
    if not words:
        return out
    out += [f"w:{w}" for w in words]
    out += [f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    out += [f"f:{words[0]}", f"f2:{' '.join(words[:2])}", f"l:{words[-1]}"]
    for word in words:
        if len(word) >= 4 and not word.startswith("‹"):
            padded = f"^{word}$"
            out += [f"c:{padded[i:i + 4]}" for i in range(len(padded) - 3)]
    if _english(said, words):
        out.append("english")
    if words[0] in ("i", "i'd", "id") and len(words) > 2 and words[1] in WANTS and QUANTIFIERS & set(words):
        out.append("wish")  # "I want every translation you do for me to ...", not "I want the code in Rust"
    elif words[0] in HOUSE:
        out.append("house")  # "we don't do default exports here", "here we squash every PR"
    elif _states(words) or any(_states(_TOKEN.findall(part)) for part in masked.split(",")[1:]):
        out.append("statement")  # a subject and its verb: it says how things are, not what to do
    if "sig:d:please" in out or lexicon.polite(masked):
        out.append("please")
    if "sig:s:when ..., do" in out or lexicon.when(masked):
        out.append("when")
    if lexicon.says_self(words, masked):
        out.append("self")
    if lexicon.points(words, masked):
        out.append("points")  # at one thing: most often a one-off task's object
    if _COLON.search(masked):
        out.append("colon")  # a lead and what follows it: a text to write, a list, a label
    if first:
        out.append("first")
    if reply:
        out.append("reply")
        out.append("reply-first" if first else "reply-later")
    if not signals:
        out.append("no cue")
    if answer_stems is None:
        out.append("no answer")  # the session's first prompt: a task, most often
    else:
        content = {w for w in words if w not in FUNCTION_WORDS and not w.startswith("‹")}
        shared = sum(1 for w in content if stem(w) in answer_stems)
        if content and shared == len(content) <= 2 and not unspaced_pairs(masked):
            out.append("echo")  # every word of it is the answer's: it takes the answer, it adds nothing ("Monday")
        shared += len(unspaced_pairs(masked) & answer_stems)
        out.append(f"shares:{min(shared, 3)}")
    if any(ch.isdigit() for ch in masked):
        out.append("digit")
    if _NAME.search(said):
        out.append("name")  # a value a correction gives: "das ist FTP", "não, é Camberra"
    if "‹c›" in masked or _OPTION.search(said):
        out.append("code")
    if masked.rstrip().endswith("?"):
        out.append("asks")
    if _contrast(masked):
        out.append("contrast")
    if _COMPLAINT.search(masked):
        out.append("complaint")
    if "english" in out and _STATUS & set(words) and not _CONTRA & set(words):
        out.append("status")  # "3 tests still fail though", "ok it works now": how it went, not what is right
    return out


def _contrast(masked: str) -> bool:
    for match in _NOT.finditer(masked):
        before = masked[:match.start()].split()[-1:]
        if match.group(1) or (before and before[0] not in _NEGATES and not before[0].endswith(("'s", "'re", "'m"))):
            return True
    return False


def _english(said: str, words: list[str]) -> bool:
    """Written in English (which the cues read well): no letter English does not write, and no
    more function words of another language than of English."""
    if any(ch.isalpha() and not ch.isascii() for ch in said):
        return False
    english = sum(w in FUNCTION_WORDS or w in COMMON for w in words)
    return sum(w in OTHER_FUNCTION_WORDS for w in words) <= english


def _states(words: list[str]) -> bool:
    """A subject led part ("my wifi drops", "ok it works now") or a finite verb; a pronoun after
    "when"/"if" is a condition of a wish, not a statement ("hex codes whenever you mention one")."""
    if not words:
        return False
    if any(w in FINITE for w in words):
        return True
    for at, word in enumerate(words[:-1]):
        if word in PRONOUNS and (at == 0 or words[at - 1] not in NOT_SUBJECT_AFTER):
            return True
    return words[0] in SUBJECTS


@lru_cache(maxsize=1)
def weights() -> Weights:
    """The shipped model (`MODEL`), read once."""
    model: Weights = json.loads(MODEL.read_text(encoding="utf-8"))["weights"]
    return model


def probabilities(feats: list[str], model: Weights | None = None) -> list[float]:
    """P(outcome) for each of OUTCOMES (a softmax over the summed weights of the features), by
    `model` (the shipped one if None)."""
    model = weights() if model is None else model
    sums = [0.0] * len(OUTCOMES)
    for name in feats:
        row = model.get(name)
        if row is not None:
            for k, w in enumerate(row):
                sums[k] += w
    top = max(sums)
    exps = [math.exp(s - top) for s in sums]
    total = sum(exps)
    return [e / total for e in exps]


def reading(feats: list[str], model: Weights | None = None) -> str | None:
    """The kind the clause teaches when the model says it teaches and its shape allows that kind
    (in another language: the likeliest kind its shape allows), else None."""
    p = probabilities(feats, model)
    if 1.0 - p[0] < THRESHOLD:
        return None
    shape = set(feats)
    kinds = sorted(range(1, len(OUTCOMES)), key=lambda k: -p[k])
    if "no answer" in shape:
        kinds = [k for k in kinds if OUTCOMES[k] != "correction"]  # nothing to correct yet
    if OUTCOMES[kinds[0]] == "instruction" and {"no answer", "no cue"} <= shape and "english" not in shape \
            and 1.0 - p[0] < SURE_ELSEWHERE:
        return None  # a first prompt in another language with no cue of habit: most often the task itself
    if "english" in shape:  # on a language it has seen little of, the model's kind is the weak part;
        kinds = kinds[:1] + [OUTCOMES.index("fact")] * ("self" in shape)  # and what the user says they are is a fact
    return next((OUTCOMES[k] for k in kinds if supported(OUTCOMES[k], shape, 1.0 - p[0])), None)


def supported(kind: str, feats: set[str], teaches: float = 1.0) -> bool:
    """What the words alone cannot carry. A correction answers an answer with a value: a number,
    code, the answer's own words ("pop drops it, apply keeps it"), or in another language a name
    ("não, é Camberra"); not "that doesn't work", nor a change to the task ("plus court stp"),
    nor a reply that thanks and turns on nothing, says only the answer's words ("Monday") or how it
    went ("3 tests still fail though"). A bare imperative with no habit in it is a
    task ("keep going"), and so is an English one whose always/never the cues found to qualify
    something else ("set git to always rebase on pull"), and any directive the cues read with
    no standing cue, unless the model is sure (`SURE`; `SURE_ELSEWHERE` in another language, where
    fewer standing cues are known): "don't include the tests in the summary", "écris un mail pour ...". In English, which the cues read well, an instruction or a fact
    with no directive is a house convention ("we don't do default exports here") or a wish said
    with no subject or verb of its own ("tldr first then details", when the model is `WISH` sure);
    not a complaint ("you never listen", "always something with this laptop") nor a remark
    ("whenever it rains, my wifi drops", "our CI always fails on Mondays"); a fact is also who the user is
    ("I run a small bike repair shop in Leeds"), when the model is `WISH` sure. In another language the
    model reads alone."""
    task = "english" in feats and "sig:not the assistant's habit" in feats
    if kind == "correction":
        if task and "sig:d:imperative" in feats:
            return False  # "set npm to always save exact versions": a task, whatever it shares
        values = {"digit", "code", "contrast", "shares:1", "shares:2", "shares:3"} \
            | ({"name"} if "english" not in feats else set())
        return not {"no answer", "sig:thanked", "echo", "status"} & feats and bool(feats & values)
    if ("sig:bare task" in feats and "self" not in feats) or task:
        return False
    directive = any(f.startswith("sig:d:") for f in feats)
    standing = any(f.startswith("sig:s:") for f in feats)
    if directive and not standing and teaches < (SURE if "english" in feats else SURE_ELSEWHERE):
        return False  # a directive the cues read, with no standing cue: a task, unless the model is sure
    if "english" not in feats or directive:
        return True
    if kind == "fact" and "self" in feats and teaches >= WISH:
        return True  # who the user is, said beside a task: "I teach 9th grade history at Lincoln High"
    return "house" in feats or (("wish" in feats or "statement" not in feats) and "complaint" not in feats
                                and teaches >= WISH)
