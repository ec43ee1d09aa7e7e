"""`tmg memory scope ID personal|project`: move one memory between the user's personal scope
(recalled in every project) and the scope of the project the command runs in, through PLUR's
own `plur_rescope` (it rewrites the scope in place and keeps the id, pinned or not).

PLUR refuses to move text it finds sensitive (an internal host, an address) into a project scope,
and answers with why: that answer is shown as it is.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tmg.memory import payloads
from tmg.memory.client import PlurClient
from tmg.project import Project
from tmg.memory.results import ResultError

PERSONAL_SCOPE = "global"  # PLUR's default for a statement learned without a scope
WHERE = ("personal", "project")


class Moved(NamedTuple):
    status: str  # rescoped, noop
    from_scope: str
    to_scope: str


class MoveOutcome(NamedTuple):
    lines: tuple[str, ...]
    ok: bool = True


def parse_rescope(data: Any) -> Moved:
    """plur_rescope for one id: what it did, or ResultError with the server's own reason."""
    rows = data.get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list) or len(rows) != 1 or not isinstance(rows[0], dict):
        raise ResultError("plur_rescope: expected one result")
    row = rows[0]
    if row.get("status") not in ("rescoped", "noop"):
        raise ResultError(str(row.get("error") or row.get("status") or "refused"))
    return Moved(str(row["status"]), str(row.get("from_scope", "")), str(row.get("to_scope", "")))


async def move_memory(client: PlurClient, engram_id: str, where: str, project: Project) -> MoveOutcome:
    engram_id = engram_id.strip()
    if where not in WHERE:
        return MoveOutcome((f"memory: say where to move {engram_id}: personal or project",), False)
    target = PERSONAL_SCOPE if where == "personal" else project.scope
    done = await client.call("plur_rescope", payloads.rescope_payload(engram_id, target), parse_rescope)
    if not done.ok or done.value is None:
        reason = (done.error or "no reason given").removeprefix("plur_rescope: ")
        return MoveOutcome((f"memory: could not move {engram_id} ({reason})",), False)
    if done.value.status == "noop":
        return MoveOutcome((f"{engram_id} is already {_label(target)}",))
    return MoveOutcome((f"moved {engram_id}: {_label(done.value.from_scope)} -> {_label(done.value.to_scope)}",))


def _label(scope: str) -> str:
    return f"project ({scope})" if scope.startswith("project:") else "personal (every project)"
