"""What a prompt asks PLUR's keyword recall for: its words less the function words.

PLUR 0.20.0 scores a note by the prompt's words it shares (any word of three letters or more, a
half hit each), so "the", "how" or "und" matched nearly every note: at a year of use most of the
store was copied, ranked and then filled the budget with notes that shared only those words
(docs/plur-at-scale.md). The words PLUR reads as asking about the past ("was", "before", "used
to": its `hasHistoricalIntent`, which keeps superseded notes in the running) stay.
"""

from __future__ import annotations

import re

from tmg.memory.teaching.phrases import FUNCTION_WORDS, OTHER_FUNCTION_WORDS

# PLUR's HISTORICAL_KEYWORDS ("used to" is two words: both kept).
_HISTORICAL = frozenset("before was prior used to previously old earlier history historical legacy".split())
_DROP = (FUNCTION_WORDS | OTHER_FUNCTION_WORDS) - _HISTORICAL
_EDGES = re.compile(r"^\W+|\W+$")


def recall_query(text: str) -> str:
    """`text` without its function words, in order; `text` itself when nothing else is left."""
    kept = [token for token in text.split() if _EDGES.sub("", token).casefold() not in _DROP]
    return " ".join(kept) if any(_EDGES.sub("", t) for t in kept) else text
