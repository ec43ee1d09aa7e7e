"""What each tool does to the store and answers, shaped like the real server's results.

Only the tools tmg relies on are implemented; any other listed tool fails with a clear
"not implemented by fakeplur" error rather than pretending to work.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from fakeplur import ranking
from fakeplur.store import Store, collapse_line_terminators, now_utc, sanitize_statement

Handler = Callable[[Store, dict[str, Any], str], dict[str, Any]]


class ToolFailure(Exception):
    """A handler error: the server answers `{"error": <message>, "success": false}` with isError."""


def _learn_one(store: Store, raw_statement: Any, ctx: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Learn a statement; an exact duplicate returns the existing engram. Returns (engram, added)."""
    if not isinstance(raw_statement, str) or not raw_statement:
        raise ToolFailure(f"plur.learn: statement must be a non-empty string, got {_js_typeof(raw_statement)}")
    statement = collapse_line_terminators(sanitize_statement(raw_statement))
    existing = store.find_duplicate(statement)
    if existing is not None:
        existing["write_count"] = existing.get("write_count", 1) + 1
        return existing, False
    return store.add_engram(statement, ctx), True


def _js_typeof(value: Any) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "object"


def learn(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    engram, added = _learn_one(store, args.get("statement"), args)
    store.save()
    return {
        "id": engram["id"],
        "statement": engram["statement"],
        "scope": engram["scope"],
        "type": engram["type"],
        "pinned": engram.get("pinned") is True,
        "content_hash": engram["content_hash"],
        "decision": "ADD",  # the real one says ADD for an absorbed duplicate too
    }


def learn_batch(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    items = args.get("engrams") if isinstance(args.get("engrams"), list) else []
    stats = {"added": 0, "updated": 0, "merged": 0, "noops": 0, "failed": 0}
    if not items:
        return {"ids": [], "results": [], "stats": stats, "failures": [],
                "warning": "No engrams provided \u2014 pass a non-empty `engrams` array."}
    ids: list[str | None] = [None] * len(items)
    results, failures = [], []
    for index, item in enumerate(items):
        ctx = {k: item.get(k) for k in ("type", "scope", "domain", "tags", "rationale", "source", "pinned",
                                        "commitment")}  # per-item session_id is ignored, as the real one does
        try:
            engram, added = _learn_one(store, item.get("statement"), ctx)
        except ToolFailure as exc:
            stats["failed"] += 1
            failures.append({"index": index, "statement": item.get("statement"), "error": str(exc)})
            continue
        ids[index] = engram["id"]
        result = {"input_index": index, "id": engram["id"], "statement": engram["statement"],
                  "scope": engram["scope"], "type": engram["type"], "decision": "ADD" if added else "NOOP"}
        if not added:
            result["existing_id"] = engram["id"]
        stats["added" if added else "noops"] += 1
        results.append(result)
    store.save()
    response: dict[str, Any] = {"ids": ids, "results": results, "stats": stats}
    if failures:
        response["failures"] = failures
        response["warning"] = f"{len(failures)} of {len(items)} engram(s) failed to persist; the rest were written."
    return response


def capture(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    episode = store.add_episode(args["summary"], args)
    store.save()
    return {"id": episode["id"], "summary": episode["summary"], "timestamp": episode["timestamp"]}


def recall(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    """Keyword recall: engrams sharing a 3+ letter word (or a tag) with the query, best first."""
    query_words = ranking.words(args["query"])
    limit = args.get("limit") if isinstance(args.get("limit"), (int, float)) else 20
    budget = args.get("budget") if isinstance(args.get("budget"), dict) else {}
    if isinstance(budget.get("max_results"), (int, float)):
        limit = budget["max_results"]
    scored = []
    for e in store.active_engrams():
        if args.get("scope") and not ranking.scope_visible(e["scope"], args["scope"]):
            continue
        if args.get("domain") and not (e.get("domain") or "").startswith(args["domain"]):
            continue
        hits = len(query_words & ranking.words(e["statement"])) + sum(
            1 for t in e.get("tags", []) if t.lower() in query_words)
        if hits:
            scored.append((hits, e))
    scored.sort(key=lambda pair: -pair[0])
    chosen = [e for _, e in scored[: int(limit)]]
    results = []
    for e in chosen:
        row = {"id": e["id"], "statement": e["statement"], "type": e["type"], "scope": e["scope"]}
        if e.get("domain"):
            row["domain"] = e["domain"]
        row.update({"retrieval_strength": e.get("retrieval_strength", 0.7), "content_hash": e["content_hash"]})
        results.append(row)
    return {"results": results, "count": len(results), "truncated": len(scored) > len(chosen), "mode": "bm25-only"}


def inject_hybrid(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    result = ranking.select(store.active_engrams(), args["task"], args.get("budget"), args.get("scope"))
    return ranking.inject_response(result, hybrid=True)


def inject(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    result = ranking.select(store.active_engrams(), args["task"], args.get("budget"), args.get("scope"))
    return ranking.inject_response(result, hybrid=False)


def status(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    from fakeplur.snapshot import load_snapshot

    return {
        "version": load_snapshot().version,
        "tool_profile": profile,
        "engram_count": len(store.active_engrams()),
        "episode_count": len(store.episodes),
        "pack_count": 0,
        "storage_root": str(store.path) if store.path else ":memory:",
        "fake": True,
    }


def timeline(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    since = _parse_when(args.get("since"))
    until = _parse_when(args.get("until"))
    search = (args.get("search") or "").lower()
    episodes = []
    for ep in store.episodes:
        when = _parse_when(ep["timestamp"])
        if since and when and when < since or until and when and when > until:
            continue
        if args.get("agent") and ep.get("agent") != args["agent"]:
            continue
        if args.get("channel") and ep.get("channel") != args["channel"]:
            continue
        if search and search not in ep.get("summary", "").lower():
            continue
        episodes.append({k: ep[k] for k in ("id", "summary", "timestamp", "agent", "channel", "tags") if k in ep})
    return {"episodes": episodes, "count": len(episodes)}


def _parse_when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=now_utc().tzinfo)


HANDLERS: dict[str, Handler] = {
    "plur_learn": learn,
    "plur_learn_batch": learn_batch,
    "plur_capture": capture,
    "plur_recall": recall,
    "plur_inject_hybrid": inject_hybrid,
    "plur_inject": inject,
    "plur_status": status,
    "plur_timeline": timeline,
}
