"""plur_inject_hybrid as the real server computes it with embeddings off (keyword scoring).

Reproduced from @plur-ai/core 0.20.0 `selectAndSpread` for what a personal store holds (no
packs, no associations to spread over, no remote stores, no knowledge anchors):
- score: +1 per tag equal to a task word, +1 per domain segment, +0.5 per task word (3+ letters)
  found in the statement; times the decayed retrieval strength; pinned x2; plus a fresh-tail
  boost for engrams learned in the last 7 days; normalized so the best is 10; kept when >= 0.3;
- buckets: behavioral/procedural (Bloom "apply") and any "never / don't / avoid / must not"
  statement are constraints, filled first within 40 % of the budget; the rest are directives;
  terminological ("remember") ones move to consider; unselected matches fill consider up to 5
  and 200 tokens;
- text: directives with a metadata line, consider cut to 60 characters, and constraints NOT in
  the text at all (only in `injected_ids`): the gotcha tmg has to work around.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

MIN_RELEVANCE = 0.3
MAX_PER_DOMAIN = 10
PINNED_BUDGET_RATIO = 0.5
CONSTRAINTS_FLOOR_RATIO = 0.4
CONSIDER_MAX = 5
CONSIDER_BUDGET = 200
DEFAULT_BUDGET = 2000
_SHARED_PREFIXES = ("group:", "project:", "space:", "team:", "org:")
_DONT_PATTERNS = [
    re.compile(r"\bnever\b", re.I),
    re.compile(r"\bdo\s+not\b", re.I),
    re.compile(r"\bdon'?t\b", re.I),
    re.compile(r"\bavoid\b", re.I),
    re.compile(r"\bmust\s+not\b", re.I),
    re.compile(r"\bshould\s+not\b", re.I),
    re.compile(r"\bNOT\b.*?\b(?:include|use|run|start|create|add|send|describe|reference|assume)\b"),
    re.compile(r"\bstop\b.*?\b(?:generating|iterating|doing|running|creating)\b", re.I),
]
_NON_WORD = re.compile(r"\W+", re.ASCII)  # JavaScript's \W is ASCII-only
_COMMITMENT_FACTOR = {"locked": 1.0, "decided": 0.9, "leaning": 0.7, "exploring": 0.5}


def words(text: str) -> set[str]:
    """Lowercased words of 3+ characters, split the way the real server splits."""
    return {w for w in _NON_WORD.split(text.lower()) if len(w) > 2}


def is_dont(statement: str) -> bool:
    """The real server's polarity check, on the first sentence (at most 200 characters)."""
    if not statement or len(statement) < 5:
        return False
    dot = statement.find(".")
    first = statement[: min(dot, 200) if dot > 0 else 200]
    return any(p.search(first) for p in _DONT_PATTERNS)


def is_shared_scope(scope: str) -> bool:
    s = scope.lower()
    return s.startswith(_SHARED_PREFIXES) or s == "public" or s.startswith(("public:", "public/"))


def scope_visible(engram_scope: str, scope_filter: str | None) -> bool:
    """Personal scopes are visible to every query; shared ones only within the filter."""
    if not scope_filter:
        return True
    if scope_filter == "global":
        return engram_scope == "global"
    within = engram_scope == scope_filter or engram_scope.startswith((scope_filter + ":", scope_filter + "/"))
    return within or not is_shared_scope(engram_scope)


def estimate_tokens(e: dict[str, Any]) -> int:
    chars = len(e["id"]) + 4 + len(e.get("statement", ""))
    if e.get("rationale"):
        chars += 15 + len(e["rationale"])
    meta = (len(e["domain"]) + 10 if e.get("domain") else 0) + (
        len(e["commitment"]) + 14 if e.get("commitment") else 0
    ) + 20 + (len(e["last_accessed"]) + 15 if e.get("last_accessed") else 0)
    if meta > 20:
        chars += meta + 3
    return math.ceil(chars / 4)


def _days_since(day: str, now: datetime) -> int:
    then = datetime.fromisoformat(day[:10]).replace(tzinfo=timezone.utc)
    return max(0, math.floor((now - then).total_seconds() / 86400))


def _fresh_tail(e: dict[str, Any], now: datetime) -> float:
    if e.get("commitment") not in (None, "exploring", "leaning"):
        return 0.0
    # The real one reads `temporal.learned_at`, which exists only for engrams with a validity
    # window; otherwise the day of `last_accessed` (UTC midnight), so same-day engrams tie.
    created = datetime.fromisoformat(e["last_accessed"][:10]).replace(tzinfo=timezone.utc)
    days = (now - created).total_seconds() / 86400
    return 0.0 if days < 0 or days > 7 else 0.2 * (1 - days / 7)


def raw_score(e: dict[str, Any], task_words: set[str], scope: str | None, now: datetime) -> float:
    """The keyword score before normalization (0 = not selected)."""
    if not scope_visible(e.get("scope", "global"), scope):
        return 0.0
    hits = sum(1.0 for tag in e.get("tags", []) if tag.lower() in task_words)
    if e.get("domain"):
        hits += sum(1.0 for part in re.split(r"[./]", e["domain"]) if part.lower() in task_words)
    statement_words = words(e.get("statement", ""))
    hits += 0.5 * sum(1 for w in task_words if w in statement_words)
    pinned = e.get("pinned") is True
    if hits == 0:
        if not pinned:
            return 0.0
        hits = 0.5
    strength = 0.05 + (e.get("retrieval_strength", 0.7) - 0.05) * math.exp(
        -0.05 * _days_since(e["last_accessed"], now)
    )
    score = hits * strength * (2 if pinned else 1)
    return score + _fresh_tail(e, now)


def is_constraint_candidate(e: dict[str, Any]) -> bool:
    level = e.get("cognitive_level")
    if level in ("remember", "understand"):
        return False
    return is_dont(e.get("statement", "")) or level in ("apply", "analyze")


def _fill(cands: list[dict[str, Any]], max_tokens: int, pinned_base: int, ledger: list[int]) -> tuple[list, int]:
    """Greedy fill in score order, pinned first, at most 10 engrams per top-level domain."""
    chosen: list[dict[str, Any]] = []
    used = 0
    domains: dict[str, int] = {}
    pinned_budget = math.floor(pinned_base * PINNED_BUDGET_RATIO)
    pinned = sorted((e for e in cands if e.get("pinned") is True), key=lambda e: -e["_score"])
    for e in pinned + [e for e in cands if e.get("pinned") is not True]:
        cost = estimate_tokens(e)
        if used + cost > max_tokens:
            continue
        if e.get("pinned") is True and ledger[0] + cost > pinned_budget:
            continue
        top = (e.get("domain") or "__none__").split(".")[0]
        if e.get("pinned") is not True and domains.get(top, 0) >= MAX_PER_DOMAIN:
            continue
        chosen.append(e)
        used += cost
        domains[top] = domains.get(top, 0) + 1
        if e.get("pinned") is True:
            ledger[0] += cost
    return chosen, used


@dataclass
class Injection:
    directives: list[dict[str, Any]]
    constraints: list[dict[str, Any]]
    consider: list[dict[str, Any]]
    tokens_used: int


def select(engrams: list[dict[str, Any]], task: str, budget: int | None, scope: str | None,
           now: datetime | None = None) -> Injection:
    """Pick the engrams for a task, in the real server's buckets and order."""
    now = now or datetime.now(timezone.utc)
    max_tokens = DEFAULT_BUDGET if budget is None else budget
    task_words = words(task)
    scored = []
    for e in engrams:
        if e.get("status", "active") != "active" or e.get("commitment") == "draft":
            continue
        raw = raw_score(e, task_words, scope, now)
        if raw > 0 or e.get("pinned") is True:
            scored.append({**e, "_raw": raw})
    top = max([s["_raw"] for s in scored] + [1.0])
    for s in scored:
        s["_score"] = s["_raw"] / top * 10
    kept = sorted((s for s in scored if s.get("pinned") is True or s["_score"] >= MIN_RELEVANCE),
                  key=lambda s: -s["_score"])
    constraint_c = [e for e in kept if is_constraint_candidate(e)]
    other_c = [e for e in kept if not is_constraint_candidate(e)]
    ledger = [0]
    first, first_used = _fill(constraint_c, math.floor(max_tokens * CONSTRAINTS_FLOOR_RATIO), max_tokens, ledger)
    directed, dir_used = _fill(other_c, max(0, max_tokens - first_used), max_tokens, ledger)
    slack = max(0, max_tokens - first_used - dir_used)
    first_ids = {e["id"] for e in first}
    second, second_used = (_fill([e for e in constraint_c if e["id"] not in first_ids], slack, max_tokens, ledger)
                           if slack > 0 else ([], 0))
    chosen = first + second + directed
    chosen_ids = {e["id"] for e in chosen}
    pool, _ = _fill([e for e in kept if e["id"] not in chosen_ids], CONSIDER_BUDGET, CONSIDER_BUDGET, [0])
    pool = pool[:CONSIDER_MAX]
    directives, constraints, demoted = [], [], []
    for e in chosen:
        level = e.get("cognitive_level")
        if level in ("remember", "understand"):
            demoted.append(e)
        elif is_dont(e.get("statement", "")) or level in ("apply", "analyze"):
            constraints.append(e)
        else:
            directives.append(e)
    used = first_used + second_used + dir_used + sum(estimate_tokens(e) for e in pool)
    return Injection(directives, constraints, pool + demoted, used)


def _one_line(value: str) -> str:
    return re.sub(r"[\r\n\u2028\u2029\u0085]+", " ", value)


def format_directive(e: dict[str, Any]) -> str:
    """`[ID] statement`, an optional rationale line, and the indented metadata line."""
    lines = [f"[{e['id']}] {_one_line(e['statement'])}"]
    if e.get("rationale"):
        lines.append(f"  Rationale: {_one_line(e['rationale'])}")
    meta = []
    if e.get("domain"):
        meta.append(f"Domain: {e['domain']}")
    if e.get("commitment"):
        meta.append(f"Commitment: {e['commitment']}")
    confidence = 0.5 * _COMMITMENT_FACTOR.get(e.get("commitment") or "", 1.0)
    meta.append(f"Confidence: {confidence:.2f}")
    if e.get("last_accessed"):
        meta.append(f"Last active: {e['last_accessed']}")
    lines.append("  " + " | ".join(m.replace(" | ", " ") for m in meta))
    return "\n".join(lines)


def format_consider(e: dict[str, Any]) -> str:
    """`[ID] <first 60 characters of the statement>`."""
    return f"[{e['id']}] {_one_line(e['statement'][:60])}"


def inject_response(result: Injection, *, hybrid: bool) -> dict[str, Any]:
    """The tool's JSON, key for key."""
    response: dict[str, Any] = {
        "directives": "\n".join(format_directive(e) for e in result.directives),
        "consider": "\n".join(format_consider(e) for e in result.consider),
        "count": len(result.directives) + len(result.constraints) + len(result.consider),
        "tokens_used": result.tokens_used,
        "injected_ids": [e["id"] for e in result.directives + result.constraints + result.consider],
    }
    if hybrid:
        response["mode"] = "hybrid"
    return response
