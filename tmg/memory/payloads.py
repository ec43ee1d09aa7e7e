"""The arguments tmg sends to PLUR, exactly as memory.md §3-§4 specify, and nothing else.

The real server silently ignores unknown keys, so an extra key would never be caught by it:
only these builders (tested for exact key sets) and the contract tests keep them out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

SUMMARY_MAX_BYTES = 2000
STATEMENT_MAX_BYTES = 2000


class EmptyBatchError(ValueError):
    """A learn_batch with nothing to learn: never sent (the server would answer a wasted warning)."""


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of `text` whose UTF-8 encoding fits `max_bytes` (never splits a character)."""
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", errors="ignore")


def error_summary(error: str, prompt: str | None, max_bytes: int = SUMMARY_MAX_BYTES) -> str:
    """`error: <error> | user: <prompt>`, the prompt only when the whole line fits; else the error, cut."""
    bare = f"error: {error}"
    if prompt:
        full = f"{bare} | user: {prompt}"
        if len(full.encode("utf-8")) <= max_bytes:
            return full
    return cut_utf8(bare, max_bytes)


def capture_summary(text: str | None = None, *, error: str | None = None, prompt: str | None = None) -> str:
    """The episode summary: the turn's text, or the error episode line; at most 2000 bytes."""
    if text is not None:
        return cut_utf8(text, SUMMARY_MAX_BYTES)
    if error is None:
        raise ValueError("capture_summary needs a text or an error")
    return error_summary(error, prompt)


def _with_scope(payload: dict[str, Any], scope: str) -> dict[str, Any]:
    # SCOPE is omitted when empty: "" would be a real (personal) scope to the server.
    if scope:
        payload["scope"] = scope
    return payload


# Where an engram came from (memory.md §3: origin decides the block's heading), as PLUR's own
# `source` field and a tag: the user's own words, or derived from a model's answer.
USER_ORIGIN, ANSWER_ORIGIN = "user", "answer"
SOURCES = {USER_ORIGIN: "tmg: the user's own words", ANSWER_ORIGIN: "tmg: a model's answer (may be wrong)"}


def session_tags(session_id: str, mode: str, origin: str | None = None) -> list[str]:
    """The tags every write carries: `session:<id>`, `mode:<mode>`, and `origin:<origin>` if given."""
    tags = [f"session:{session_id}", f"mode:{mode}"]
    return tags + [f"origin:{origin}"] if origin else tags


def inject_payload(task: str, budget: int, scope: str = "") -> dict[str, Any]:
    """`plur_inject_hybrid {task, budget, scope?}`. Callers skip the call for an empty task."""
    if not task:
        raise ValueError("inject needs a non-empty task")
    return _with_scope({"task": task, "budget": int(budget)}, scope)


def capture_payload(summary: str, agent: str, session_id: str) -> dict[str, Any]:
    """`plur_capture {summary, agent, session_id}`; the summary is bounded to 2000 bytes here too."""
    return {"summary": cut_utf8(summary, SUMMARY_MAX_BYTES), "agent": agent, "session_id": session_id}


def learn_payload(statement: str, tags: Sequence[str], scope: str = "", *, pinned: bool = False,
                  source: str | None = None) -> dict[str, Any]:
    """`plur_learn {statement, tags, scope?, source?, pinned?}`: no `agent`, no `session_id`
    (the server defines neither). A user's standing instruction is `pinned` (PLUR then injects it
    for every task, whatever its words) with `source` USER_SOURCE."""
    if not statement.strip():
        raise ValueError("learn needs a non-blank statement")
    payload = _with_scope({"statement": statement, "tags": list(tags)}, scope)
    if source:
        payload["source"] = source
    if pinned:
        payload["pinned"] = True
    return payload


def batch_item(statement: str, tags: Sequence[str], scope: str = "", source: str | None = None) -> dict[str, Any]:
    """One learn_batch engram `{statement, scope?, tags, source?}`, cut to 2000 bytes; no per-item session_id."""
    item = _with_scope({"statement": cut_utf8(statement, STATEMENT_MAX_BYTES)}, scope) | {"tags": list(tags)}
    if source:
        item["source"] = source
    return item


def learn_batch_payload(statements: Iterable[str], tags: Sequence[str], scope: str = "") -> dict[str, Any]:
    """`plur_learn_batch {engrams: [...], max_llm_calls: 0}`; blank statements are dropped.

    Raises:
        EmptyBatchError: nothing non-blank to learn (an empty batch is never sent).
    """
    return learn_batch_items_payload({"statement": s, "tags": list(tags), "scope": scope} for s in statements)


def learn_batch_items_payload(items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """`plur_learn_batch` from engrams that each keep their own tags and scope (a replayed spool).

    Each item is rebuilt through `batch_item`, so only `statement`, `scope` and `tags` are ever
    sent, whatever the item holds; items without a non-blank string statement are dropped.

    Raises:
        EmptyBatchError: nothing non-blank to learn (an empty batch is never sent).
    """
    engrams = []
    for item in items:
        statement = item.get("statement")
        if not isinstance(statement, str) or not statement.strip():
            continue
        tags = item.get("tags") or []
        scope = item.get("scope") or ""
        source = item.get("source")
        engrams.append(batch_item(statement, [str(t) for t in tags], scope if isinstance(scope, str) else "",
                                  source if isinstance(source, str) else None))
    if not engrams:
        raise EmptyBatchError("learn_batch needs at least one non-blank statement")
    # 0: never let the server spend the user's provider budget on dedup calls.
    return {"engrams": engrams, "max_llm_calls": 0}


def recall_payload(query: str, limit: int | None = None, scope: str = "") -> dict[str, Any]:
    """`plur_recall {query, limit?, scope?}`: used to resolve selected ids to their full statements."""
    if not query.strip():
        raise ValueError("recall needs a non-blank query")
    payload: dict[str, Any] = {"query": query}
    if limit is not None:
        payload["limit"] = int(limit)
    return _with_scope(payload, scope)


def pin_payload(engram_id: str, pinned: bool = True) -> dict[str, Any]:
    """`plur_pin {id, pinned}`: pin (always inject) or unpin one engram."""
    if not engram_id.strip():
        raise ValueError("pin needs an engram id")
    return {"id": engram_id, "pinned": bool(pinned)}


def pinned_list_payload() -> dict[str, Any]:
    """`plur_pin {list: true}`: the pinned set, with each engram's statement."""
    return {"list": True}


def forget_payload(engram_id: str, reason: str | None = None) -> dict[str, Any]:
    """`plur_forget {id, reason?}`: retire one engram by its exact id (never by a search term:
    a search could retire an engram the user did not mean)."""
    if not engram_id.strip():
        raise ValueError("forget needs an engram id")
    payload = {"id": engram_id}
    if reason:
        payload["reason"] = reason
    return payload


def rescope_payload(engram_id: str, target_scope: str) -> dict[str, Any]:
    """`plur_rescope {id, target_scope}`: move one engram (local targets: `global`, `local`,
    `project:<id>`; the server rewrites its scope in place and keeps its id)."""
    if not engram_id.strip() or not target_scope.strip():
        raise ValueError("rescope needs an engram id and a target scope")
    return {"id": engram_id, "target_scope": target_scope}


def timeline_payload(search: str | None = None, since: str | None = None) -> dict[str, Any]:
    """`plur_timeline {search?, since?}`."""
    payload: dict[str, Any] = {}
    if search:
        payload["search"] = search
    if since:
        payload["since"] = since
    return payload


def sync_payload(remote: str | None = None, remote_type: str = "personal") -> dict[str, Any]:
    """`plur_sync {remote?, remote_type}`: the remote only where PLUR adds it (its first push)."""
    payload: dict[str, Any] = {"remote_type": remote_type}
    if remote:
        payload["remote"] = remote
    return payload


def stores_add_payload(path: str, scope: str) -> dict[str, Any]:
    """`plur_stores_add {path, scope, shared, readonly}` for a repository's team store: read-only,
    so PLUR never rewrites it (tmg edits it; a teammate's git pull changes it)."""
    return {"path": path, "scope": scope, "shared": True, "readonly": True}


_TYPES = ("behavioral", "terminological", "procedural", "architectural")
_COMMITMENTS = ("exploring", "leaning", "decided", "locked", "draft")


def relearn_item(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """One `plur_learn_batch` engram that adds back an engram PLUR stored (a store record: its
    statement, type, scope, domain, tags, rationale, source, pinned, commitment); None for a
    record that is not an active engram with a statement."""
    statement = record.get("statement")
    if record.get("status", "active") != "active" or not isinstance(statement, str) or not statement.strip():
        return None
    item: dict[str, Any] = {"statement": cut_utf8(statement, STATEMENT_MAX_BYTES)}
    for key in ("scope", "domain", "rationale", "source"):
        if isinstance(record.get(key), str) and record[key]:
            item[key] = record[key]
    if record.get("type") in _TYPES:
        item["type"] = record["type"]
    if record.get("commitment") in _COMMITMENTS:
        item["commitment"] = record["commitment"]
    if isinstance(record.get("tags"), list):
        item["tags"] = [str(t) for t in record["tags"]]
    if record.get("pinned") is True:
        item["pinned"] = True
    return item
