"""`tmg memory share ID` (and `add --share`): move one of the project's memories into the
repository's team file, so teammates who trust their clone get it (`tmg.memory.team_store`).

1. The item must be this project's, or personal: a personal one is first moved into the
   project's scope with PLUR's `plur_rescope` (which scans it for sensitive content, as it does
   before any shared scope, and refuses with its reason).
2. Nothing that looks like a secret is shared: the scrubber that keeps secrets out of the store
   (config secrets and secret shapes) must find nothing in it.
3. PLUR 0.20.0 has no tool that writes a file store (`plur_rescope` to a file store's scope only
   rewrites the scope in the primary store: measured), so tmg adds PLUR's own record of it to
   the team file (`tmg.memory.team_file`), then retires the original with `plur_forget`: from
   then on the repository's copy is the one recalled, here and in every trusted clone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tmg.memory import payloads
from tmg.memory.client import PlurClient
from tmg.memory.manage import Outcome
from tmg.memory.rescope import parse_rescope
from tmg.memory.team_file import TeamFileError, add, remove, shared_record
from tmg.memory.team_store import original_id, point, register, team_file, team_prefix
from tmg.project import PROJECT_PREFIX, Project


async def share_memory(client: PlurClient, engram_id: str, project: Project, home: Path,
                       trusted: Callable[[Path], bool], scrub: Callable[[str], str] = lambda s: s) -> Outcome:
    engram_id = engram_id.strip()
    if not trusted(project.root):
        return Outcome((f"memory: {project.root} is not trusted, so its team memory is never loaded here: "
                        f"`tmg trust {project.root}` first",), False)
    if engram_id.startswith(team_prefix(project.scope)):
        return Outcome((f"{engram_id} is already shared in {team_file(project)}",))
    status = await client.status()
    root = status.value.raw.get("storage_root") if status.ok and status.value is not None else None
    if not isinstance(root, str) or not root:
        return Outcome((f"memory: could not share {engram_id} (the server did not say where its store is: "
                        f"{status.error or 'no storage_root'})",), False)
    record = await asyncio.to_thread(_primary_record, Path(root) / "engrams.yaml", engram_id)
    if record is None:
        return Outcome((f"memory: no engram {engram_id} in this store (`tmg memory list` or `search` shows ids)",),
                       False)
    scope = str(record.get("scope") or "global")
    if scope.startswith(PROJECT_PREFIX) and scope != project.scope:
        return Outcome((f"memory: {engram_id} belongs to another project ({scope}); share it from there",), False)
    statement = str(record["statement"])
    if scrub(statement) != statement:
        return Outcome((f"memory: {engram_id} is not shared: it holds what looks like a secret",), False)
    if scope != project.scope:  # personal: into the project's scope, through PLUR's own checks
        moved = await client.call("plur_rescope", payloads.rescope_payload(engram_id, project.scope), parse_rescope)
        if not moved.ok:
            return Outcome((f"memory: could not share {engram_id} "
                            f"({(moved.error or 'no reason given').removeprefix('plur_rescope: ')})",), False)
    store = point(project, home, trusted)
    file = team_file(project)
    try:
        added = await asyncio.to_thread(add, file, shared_record(record, project.scope))
    except (TeamFileError, OSError) as exc:
        return Outcome((f"memory: could not share {engram_id} ({exc})",), False)
    store = store or point(project, home, trusted)  # the file exists now: link it
    problem = await register(client, store, Path(root)) if store is not None else "the team file is not linked"
    shared_id = team_prefix(project.scope) + added.id.removeprefix("ENG-")
    retired = await client.forget(engram_id, reason=f"shared in {file} as {shared_id}")
    lines = [f"shared {engram_id} as {shared_id}: {' '.join(statement.split())}",
             f"  in {file}: commit it, and teammates who trust their clone get it"]
    if not added.new:
        lines[0] += " (the file already held it)"
    if not retired.ok:
        lines.append(f"  the original {engram_id} could not be retired ({retired.error}); `tmg memory forget` it")
    if problem:
        return Outcome((*lines, problem), False)
    return Outcome(tuple(lines))


def _primary_record(path: Path, engram_id: str) -> dict[str, Any] | None:
    """PLUR's own record of an active engram in its primary store file."""
    import yaml

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError):
        return None
    rows = data.get("engrams") if isinstance(data, dict) else data
    for row in rows if isinstance(rows, list) else ():
        if isinstance(row, dict) and row.get("id") == engram_id and row.get("status", "active") == "active" \
                and isinstance(row.get("statement"), str):
            return row
    return None


async def unshare_memory(engram_id: str, project: Project) -> Outcome | None:
    """`tmg memory forget ID` of an item of this repository's team file: it leaves the file (the
    teammates' copies once they pull the commit); None when `engram_id` is not such an item."""
    item_id = original_id(engram_id.strip(), project.scope)
    if item_id is None:
        return None
    file = team_file(project)
    try:
        removed = await asyncio.to_thread(remove, file, item_id)
    except (TeamFileError, OSError) as exc:
        return Outcome((f"memory: could not forget {engram_id} ({exc})",), False)
    if removed is None:
        return Outcome((f"memory: {file} has no item {item_id} ({engram_id})",), False)
    return Outcome((f"forgotten: {engram_id}  {' '.join(str(removed.get('statement', '')).split())}",
                    f"  removed from {file}: commit it, and your teammates' copies go with their next pull"))
