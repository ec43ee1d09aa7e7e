"""The repository's team file, `.plur/engrams.yaml`, as tmg writes it: PLUR's store format
(`engrams:` a list of engrams with id, statement, type, scope, status), one item per shared
instruction or note, in id order with a fixed key order, so that sharing one item changes only
its own lines (a small diff to review, and two teammates who share at once seldom touch the same
lines). PLUR reads it (a read-only store: `tmg.memory.team_store`) and never writes it.

Edits are made under PLUR's own lock on the file (`tmg.memory.plur_lock`), written atomically.
A file that does not read as such a list (a merge left conflict markers in it) is never
rewritten: the user is told to mend it first.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from tmg.memory.plur_lock import StoreBusy, plur_lock

HEADER = """\
# This repository's shared memory: instructions and notes its team keeps with the code, read by
# tmg (and any PLUR client) in a trusted checkout. `tmg memory share ID` adds one, `tmg memory
# forget ID` removes one; review and commit changes to this file like code. See tmg's
# docs/memory-sync.md.
"""
_ORDER = ("id", "statement", "type", "scope", "status", "pinned", "tags", "domain", "rationale", "source",
          "commitment", "visibility")
# Tags that only mean something on the machine that wrote them.
_LOCAL_TAGS = ("session:", "mode:")


class TeamFileError(Exception):
    """The file cannot be read or written; the message says why, for the user."""


class Added(NamedTuple):
    id: str  # the item's id in the file (PLUR shows it as ENG-<prefix>-...)
    new: bool  # False: the file already held this statement


def read_items(path: Path) -> list[dict[str, Any]]:
    """The file's items (none when it does not exist). Raises TeamFileError."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise TeamFileError(f"cannot read {path} ({exc})") from exc
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise TeamFileError(f"{path} is not valid YAML (a merge conflict left in it?); mend it first: "
                            f"{' '.join(str(exc).split())[:160]}") from exc
    items = (data or {}).get("engrams", []) if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise TeamFileError(f"{path} is not a PLUR store (an `engrams:` list); mend it first")
    return items


def shared_record(record: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """The team file's item for an engram PLUR stored: its words and kind, in the project's scope,
    marked shareable (`visibility: public`), without what only meant something on this machine."""
    statement = str(record["statement"])
    digest = hashlib.sha256(" ".join(statement.split()).encode()).hexdigest()[:8]
    item: dict[str, Any] = {"id": f"ENG-{time.strftime('%Y-%m%d')}-{digest}", "statement": statement,
                            "type": record.get("type") or "behavioral", "scope": scope, "status": "active"}
    if record.get("pinned") is True:
        item["pinned"] = True
    tags = [str(t) for t in record.get("tags") or () if not str(t).startswith(_LOCAL_TAGS)]
    if tags:
        item["tags"] = tags
    for key in ("domain", "rationale", "source", "commitment"):
        if isinstance(record.get(key), str) and record[key]:
            item[key] = record[key]
    item["visibility"] = "public"
    return item


def add(path: Path, item: Mapping[str, Any]) -> Added:
    """Add `item` to the file (made with its folder if need be), unless its statement is there."""
    with _locked(path):
        items = read_items(path)
        words = " ".join(str(item["statement"]).split())
        for existing in items:
            if " ".join(str(existing.get("statement", "")).split()) == words and existing.get("status") == "active":
                return Added(str(existing.get("id")), False)
        _write(path, [*items, dict(item)])
    return Added(str(item["id"]), True)


def remove(path: Path, item_id: str) -> dict[str, Any] | None:
    """Remove the item `item_id`; the item removed, or None when the file has no such item."""
    with _locked(path):
        items = read_items(path)
        kept = [i for i in items if i.get("id") != item_id]
        if len(kept) == len(items):
            return None
        _write(path, kept)
    return next(i for i in items if i.get("id") == item_id)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with plur_lock(path):
            yield
    except StoreBusy as exc:
        raise TeamFileError(str(exc)) from None


def _write(path: Path, items: list[dict[str, Any]]) -> None:
    import yaml

    from tmg.atomic_file import replace_file

    ordered = [{**{k: i[k] for k in _ORDER if k in i}, **{k: v for k, v in i.items() if k not in _ORDER}}
               for i in sorted(items, key=lambda i: str(i.get("id", "")))]
    body = yaml.safe_dump({"engrams": ordered}, sort_keys=False, allow_unicode=True, width=100,
                          default_flow_style=False)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644  # a file of the repository, not private
    replace_file(path, (HEADER + body).encode(), mode=mode)
