"""What each tool does to the store and answers, shaped like the real server's results.

Only the tools tmg relies on are implemented; any other listed tool fails with a clear
"not implemented by fakeplur" error rather than pretending to work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from fakeplur import ranking
from fakeplur.store import Store, collapse_line_terminators, now_utc, sanitize_statement

Handler = Callable[[Store, dict[str, Any], str], dict[str, Any]]


class ToolFailure(Exception):
    """A handler error: the server answers `{"error": <message>, "success": false}` with isError."""


# The real server's secret shapes (@plur-ai/core `SECRET_PATTERNS`): a learn whose statement or
# context matches one is refused ("Secret detected in statement or context: <name>").
SECRET_PATTERNS = (
    ("aws_access_key", re.compile(r"AKIA[0-9A-Z]{16}")),
    ("aws_secret_key", re.compile(r"(?:aws_secret_access_key|secret_access_key)\s*[=:]\s*[A-Za-z0-9/+=]{40}", re.I)),
    ("generic_api_key", re.compile(r"(?:^|[^a-z])(sk|pk)[-_][a-z0-9][a-z0-9_-]{19,}", re.I)),
    ("api_key_assignment", re.compile(r"(?:api[_-]?key|api[_-]?secret|secret[_-]?key)\s*[=:]\s*\S{20,}", re.I)),
    ("password_assignment", re.compile(r"password\s*[=:]\s*\S{8,}", re.I)),
    ("connection_string", re.compile(r"(?:postgres|mysql|mongodb|redis)://\S+")),
    ("jwt", re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}")),
    ("private_key", re.compile(r"-----BEGIN\s+\S+\s+PRIVATE KEY-----")),
    ("bearer_token", re.compile(r"Bearer\s+[A-Za-z0-9._~+/=-]{20,}")),
)
_CONTEXT_KEYS = ("domain", "tags", "rationale", "source")
# The pinned set's share of the default injection budget (2000 x 0.5), in estimated tokens.
PINNED_QUOTA = 1000


def detect_secret(text: str) -> str | None:
    return next((name for name, rx in SECRET_PATTERNS if rx.search(text)), None)


def _learn_one(store: Store, raw_statement: Any, ctx: dict[str, Any], fn: str = "learn") -> tuple[dict[str, Any], bool]:
    """Learn a statement; an exact duplicate returns the existing engram. Returns (engram, added).

    As the real one: cut at leaked markup and trailing space first, then refuse an empty
    statement, then a statement or context holding a secret shape."""
    statement = sanitize_statement(raw_statement) if isinstance(raw_statement, str) else raw_statement
    if not isinstance(statement, str) or not statement:
        raise ToolFailure(f"plur.{fn}: statement must be a non-empty string, got {_js_typeof(statement)}")
    statement = collapse_line_terminators(statement)
    context = {k: ctx[k] for k in _CONTEXT_KEYS if ctx.get(k)}
    secret = detect_secret(statement + ("\n" + json.dumps(context) if context else ""))
    if secret is not None:
        raise ToolFailure(f"Secret detected in statement or context: {secret}. Use config.allow_secrets to override.")
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
    if args.get("pinned") is True and _pinned_used(store) >= PINNED_QUOTA:
        used = _pinned_used(store)
        return {"success": False, "error": "pinned_quota_exceeded", "quota": PINNED_QUOTA, "used": used,
                "free": PINNED_QUOTA - used, "pinned_count": len(_pinned(store)),
                "note": "The pinned set has no room left, so this engram cannot be pinned. The statement was NOT stored."}
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
            engram, added = _learn_one(store, item.get("statement"), ctx, "learnRouted")
        except ToolFailure as exc:
            stats["failed"] += 1
            raw = item.get("statement")
            failures.append({"index": index, "statement": sanitize_statement(raw) if isinstance(raw, str) else raw,
                             "error": str(exc)})
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
    terms = (args.get("search") or "").lower().split()  # the real server: any of the words
    episodes = []
    for ep in store.episodes:
        when = _parse_when(ep["timestamp"])
        if since and when and when < since or until and when and when > until:
            continue
        if args.get("agent") and ep.get("agent") != args["agent"]:
            continue
        if args.get("channel") and ep.get("channel") != args["channel"]:
            continue
        if terms and not any(t in ep.get("summary", "").lower() for t in terms):
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


def _pinned(store: Store) -> list[dict[str, Any]]:
    return [e for e in store.active_engrams() if e.get("pinned") is True]


def _pinned_used(store: Store) -> int:
    return sum(ranking.estimate_tokens(e) for e in _pinned(store))


def pin(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    """plur_pin: {list: true} lists the pinned set with its quota; {id, pinned?} sets the flag."""
    if args.get("list") is True:
        used = _pinned_used(store)
        result: dict[str, Any] = {"count": len(_pinned(store)),
                                  "quota": {"tokens": PINNED_QUOTA, "used": used, "free": PINNED_QUOTA - used,
                                            "over": used > PINNED_QUOTA}}
        result["pinned"] = [{k: e[k] for k in ("id", "statement", "scope", "domain") if k in e} for e in _pinned(store)]
        return result
    if not args.get("id"):
        raise ToolFailure("Provide id (or list:true to list pinned)")
    engram = next((e for e in store.engrams if e.get("id") == args["id"]), None)
    if engram is None:
        raise ToolFailure(f"Engram not found: {args['id']}")
    engram["pinned"] = args.get("pinned", True) is True
    store.save()
    return {"id": engram["id"], "statement": engram["statement"], "pinned": engram["pinned"]}


def forget(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    """plur_forget: retire an engram by exact id, or by a search matching exactly one."""
    if args.get("id"):
        engram = next((e for e in store.engrams if e.get("id") == args["id"]), None)
        if engram is None:
            raise ToolFailure(f"Engram not found: {args['id']}")
        if engram.get("status") == "retired":
            return {"success": False, "error": f"Already retired: {args['id']}"}
        _retire(store, engram, args.get("reason"))
        return {"success": True, "retired": {"id": engram["id"], "statement": engram["statement"]}}
    if args.get("search"):
        matches = recall(store, {"query": args["search"], "limit": 100}, profile)["results"]
        if not matches:
            return {"success": False, "error": f'No active engrams matching "{args["search"]}"'}
        if len(matches) > 1:
            return {"success": False, "matches": [{"id": m["id"], "statement": m["statement"]} for m in matches[:20]],
                    "total": len(matches), "error": f"{len(matches)} matches. Specify exact ID."}
        engram = next(e for e in store.engrams if e.get("id") == matches[0]["id"])
        _retire(store, engram, args.get("reason"))
        return {"success": True, "retired": {"id": engram["id"], "statement": engram["statement"]}}
    raise ToolFailure("Provide either id or search parameter")


def _retire(store: Store, engram: dict[str, Any], reason: Any) -> None:
    engram["status"] = "retired"
    if isinstance(reason, str) and reason:
        engram["retired_reason"] = reason
    store.save()


def rescope(store: Store, args: dict[str, Any], profile: str) -> dict[str, Any]:
    """plur_rescope to a local target (local, global, project:*): the scope rewritten in place,
    the id kept. Not reproduced: remote store targets, and the real server's refusal to move
    text it finds sensitive (an internal host, an address) into a shared scope."""
    target = args["target_scope"]
    if target not in ("local", "global") and not target.startswith("project:"):
        raise ToolFailure(f'Cannot rescope to "{target}": no configured store matches that scope. Valid targets: '
                          "local, global, project:*. Check for typos \u2014 an unmatched shared scope would never "
                          "reach a team store (#676).")
    results = []
    for engram_id in [args["id"]] if args.get("id") else list(args.get("ids") or []):
        engram = next((e for e in store.engrams if e.get("id") == engram_id), None)
        if engram is None:
            results.append({"id": engram_id, "status": "error", "action": "local_rewrite",
                            "error": f"Engram not found: {engram_id}"})
            continue
        status = "noop" if engram["scope"] == target else "rescoped"
        results.append({"id": engram_id, "status": status, "action": "local_rewrite", "from_scope": engram["scope"],
                        "to_scope": target, "new_id": engram_id})
        engram["scope"] = target
    store.save()
    return {"results": results, "success": all(r["status"] != "error" for r in results)}


HANDLERS: dict[str, Handler] = {
    "plur_rescope": rescope,
    "plur_pin": pin,
    "plur_forget": forget,
    "plur_learn": learn,
    "plur_learn_batch": learn_batch,
    "plur_capture": capture,
    "plur_recall": recall,
    "plur_inject_hybrid": inject_hybrid,
    "plur_inject": inject,
    "plur_status": status,
    "plur_timeline": timeline,
}
