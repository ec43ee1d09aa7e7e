"""What `plur_learn` says it did with a statement: its id, and the scope it was stored in.

The real server keeps text it finds sensitive (an internal host name, a public address: its
"infra" category) out of shared scopes such as `project:<id>`: the write succeeds, but the
engram is stored in the personal `local` scope (`"demoted": true`, `requested_scope`, a warning
naming the pattern), where every project would see it. The learning hook must notice that.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from tmg.memory import results

_PATTERN = re.compile(r"\(([\w, -]+)\) detected")


class Learned(NamedTuple):
    id: str
    scope: str | None  # where the server stored it (None: it did not say)
    why: str = ""  # what the server held back, when it stored it elsewhere than asked


def parse_learned(data: Any) -> Learned:
    """plur_learn -> the engram id and scope (a refusal without isError is a failed write, as
    `results.parse_learn` has it)."""
    engram_id = results.parse_learn(data)
    scope = data.get("scope") if isinstance(data.get("scope"), str) else None
    why = ""
    if data.get("demoted") is True:
        found = _PATTERN.search(str(data.get("warning", "")))
        why = found.group(1).replace("_", " ") if found else "sensitive material"
    return Learned(engram_id, scope, why)
