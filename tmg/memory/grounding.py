"""Grounding what the model asks memory to keep in what the user typed (the `remember` tool).

The model may say "remember: the user wants British spelling" however it likes; what is kept is
the user's own words: the shortest run of the user's own-voice clauses (`teaching.segment`: not
code, logs, quotes or pasted material) of one typed prompt that holds most of the words the model
sent, widened to whole sentences when they stay short. Nothing else is ever a source: piped
stdin, attached files and tool or MCP results are not typed, so they never reach this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from tmg.memory.teaching.phrases import FUNCTION_WORDS, stem

# The share of the model's content words one typed span must hold: a paraphrase ("can't handle
# tables" for "chokes on tables") keeps most of them; at least two when it has two or more.
COVER = 0.6
MAX_SPAN_CHARS = 400  # a statement, not a paste: a span longer than this is the bare clauses
_WORD = re.compile(r"[\w'’]+")
# How a model frames what the user said ("The user prefers ..."): not the user's content.
_FRAMING = frozenset(stem(w) for w in "user users user's prefers prefer wants want likes like asked asks "
                     "says said told remember note assistant".split())


class Grounded(NamedTuple):
    span: str  # the user's words, as typed
    prompt: int  # which of the typed prompts it came from (0: the newest)


def content(text: str) -> list[str]:
    """The words of `text` that say something, normalised so a near-verbatim copy matches."""
    out = []
    for raw in _WORD.findall(text.casefold().replace("’", "'")):
        word = raw.strip("'")
        if word and word not in FUNCTION_WORDS and stem(word) not in _FRAMING:
            out.append(stem(word))
    return out


def ground(text: str, typed: Iterable[str]) -> Grounded | None:
    """The span of a typed prompt (newest first) that `text` comes from, or None when no prompt
    holds at least COVER of its content words within one run of the user's own clauses."""
    from tmg.memory.teaching.segment import user_clauses

    wanted = set(content(text))
    if len(wanted) < 2:  # one word ("tabs") is found in any prompt that mentions it, a question too
        return None
    for number, prompt in enumerate(typed):
        clauses = user_clauses(prompt)
        words = [set(content(prompt[c.start:c.end])) for c in clauses]
        best = _shortest_cover(words, wanted)
        if best is None:
            continue
        first, last = best
        span = _widened(prompt, clauses, first, last)
        return Grounded(span, number)
    return None


def _shortest_cover(words: list[set[str]], wanted: set[str]) -> tuple[int, int] | None:
    """The shortest run of clauses (by count) whose words hold COVER of `wanted`."""
    need = max(COVER * len(wanted), min(2, len(wanted)))
    best: tuple[int, int] | None = None
    for first in range(len(words)):
        found: set[str] = set()
        for last in range(first, len(words)):
            found |= words[last] & wanted
            if len(found) >= need:
                if best is None or last - first < best[1] - best[0]:
                    best = (first, last)
                break
    return best


def _widened(prompt: str, clauses: list, first: int, last: int) -> str:
    """The clauses `first..last`, widened to their whole sentences when those stay short."""
    start, end = first, last
    while start > 0 and clauses[start - 1].sentence == clauses[first].sentence:
        start -= 1
    while end + 1 < len(clauses) and clauses[end + 1].sentence == clauses[last].sentence:
        end += 1
    whole = prompt[clauses[start].start:clauses[end].end].strip()
    if len(whole) <= MAX_SPAN_CHARS:
        return whole
    return prompt[clauses[first].start:clauses[last].end].strip()[:MAX_SPAN_CHARS]
