"""What follows a "from now on" that is no rule for the assistant: what the user expects to happen
("going forward it should be fine", "from now on the build should be green") or a resolution of
their own ("going forward I'm going to tune the Steinway first", "I've decided that from now on
I'll write to each family"). Either is a status or a plan, said to the assistant, not asked of it.
"""

from __future__ import annotations

from tmg.memory.teaching import cues
from tmg.memory.teaching.phrases import ANY, Phrases, Words

_STATE = "(fine|ok|okay|good|stable|alright|steady|quiet|green|all right|back to normal)"
PREDICTION = Phrases(
    f"(it|we|things|that|this|everything|all|you|they) (should|will|ought to|shall) (be|stay|remain|keep) {_STATE}",
    f"(it'll|we'll|that'll|things'll|everything'll|itll|well) (be|stay) {_STATE}",
    "(it|we|things|that|this|everything) (should|will) (work|hold up|run) (fine|now|ok)",
    "(it|we|things|that|this|everything) (should|will) be no (problem|issue|issues|problems)",
    f"(should|will) (be|stay|remain) {_STATE}",
    f"(the|our|my) {ANY} (should|will) (be|stay|remain) {_STATE}")  # "the build should be green"
# The user's own future, then a verb that is no wish of theirs about the answers ("I'll want ...",
# "I'll call you Ziggy" are for the assistant; a "you" later in the clause is too).
_OWN_FUTURE = Phrases("(i'll|ill|i will|i'm going to|im going to|i'm gonna|im gonna|i am going to|i'm gonna try to"
                      "|i'll try to|i'll try and|i'll probably|i'll just)",
                      # (and in the other languages whose "from now on" the cues know)
                      "(je vais|je compte|ich werde|werde ich|voy a|vou|vado a|ik ga|ik zal|jag ska|jag kommer att|jeg skal"
                      "|jeg kommer til å|ću|ćemo|saya akan|aku akan|kami akan|mwen pral|m pral|będę|bede|budu"
                      "|я буду|я собираюсь|я буду теперь)")
_FOR_THE_ASSISTANT = frozenset("want need expect prefer like call name ask be send give paste share".split())
_YOU = frozenset("you your yours yourself u ur you'll you're youre du dich dir tu toi vous usted ustedes você voce jij"
                 " ty ти ты вы te kamu anda awak".split())


def expects(words: Words) -> bool:
    """A "from now on" right before what the user expects, or before (or after) their own plan."""
    for index in cues.STRONG_TIME.finditer(words):
        after = index + cues.STRONG_TIME.match_at(words, index)
        if PREDICTION.match_at(words, after) or _own_plan(words, after) or _world(words, after):
            return True
    return False


# A subject of the world's, then its verb: "from now on p99 should stay under 200ms", "going forward
# the taper starts monday". Not the assistant's work ("from now on all answers should be short"),
# nor a person ("from now on you ...", "... I"), nor "is": "the main branch is trunk" says what holds.
_WORLD_VERBS = frozenset("will stays starts runs goes begins ends happens moves wird".split())
_DETERMINERS = frozenset("the our my this that these all every".split())
_WORK = frozenset("answer answers reply replies response responses code example examples email emails summary summaries "
                  "explanation explanations output commit commits message messages doc docs comment comments snippet "
                  "snippets script scripts query queries translation translations text texts".split())
_RULE = frozenset("default standard rule norm convention".split())  # "from now on, metric is the default"
_PEOPLE = _YOU | frozenset("i i'm we we're he she they everyone everybody nobody".split())


def _world(words: Words, after: int) -> bool:
    at = after + (after < len(words) and words[after] in _DETERMINERS)
    if at >= len(words) or words[at] in _PEOPLE or cues.is_verb(words[at]):
        return False
    for verb in range(at + 1, min(at + 3, len(words))):
        if words[verb] in _WORLD_VERBS or words[verb:verb + 2] in (["should", "stay"], ["should", "remain"]):
            rest = words[verb + 1 + (words[verb] == "should"):]
            return not (_WORK | _RULE) & set(words[at:verb + 3]) \
                and not cues.imperative(Words(" ".join(rest)))  # ("..., so give me -n auto")
        if cues.is_verb(words[verb]) or words[verb] in _PEOPLE:
            return False
    return False


def _own_plan(words: Words, after: int) -> bool:
    if _YOU & set(words):
        return False
    if _doing(words, after):
        return True
    plan = _OWN_FUTURE.find(words)
    if plan < 0 or plan > after:  # the plan opens right after the "from now on", or before it
        return False
    verb = plan + _OWN_FUTURE.match_at(words, plan)
    return verb < len(words) and words[verb] not in _FOR_THE_ASSISTANT


def _doing(words: Words, at: int) -> bool:
    """"from now on I'm only answering emails after 10am", "I'm generating them with openssl": what
    the user does from now on, said in the present."""
    if (at < len(words) and words[at] in ("i'm", "im")) or words[at:at + 2] == ["i", "am"]:
        at += 1 + (words[at] == "i")
        at += at < len(words) and words[at] in ("only", "just", "also", "now")
        return at < len(words) and words[at].endswith("ing") and len(words[at]) > 4 and words[at] != "going" \
            and not cues.imperative(Words(" ".join(words[at + 1:])))  # ("..., so give fish syntax")
    return False
