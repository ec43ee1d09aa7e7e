"""Argument validation exactly as the real PLUR server does it, with its error envelope.

The real server turns each tool's JSON input schema into a zod (v3) object with passthrough
(unknown keys are accepted and ignored) and reports failures as one compact JSON text naming the
received and the missing fields. This module reproduces that conversion: strings (with enums),
numbers (never coerced from strings), booleans, arrays (a JSON-array string or a comma-separated
string is accepted when the items are strings), objects with properties, anyOf/oneOf unions;
anything else is accepted as is. `minimum`/`maximum` are not enforced, as in the real one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

_MISSING = object()


@dataclass(frozen=True)
class Issue:
    """One zod issue: where, what, and whether the value was simply absent."""

    path: tuple[str | int, ...]
    message: str
    missing: bool = False


@dataclass
class Validated:
    """The outcome of validating one call's arguments."""

    ok: bool
    data: dict[str, Any] = field(default_factory=dict)
    error_payload: dict[str, Any] = field(default_factory=dict)


def js_type(value: Any) -> str:
    """The type name zod reports for a received value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _check(prop: Any, value: Any, path: tuple[str | int, ...], issues: list[Issue]) -> Any:
    """Validate one value against one property schema; return the (coerced) value."""
    if not isinstance(prop, dict):
        return value
    variants = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(variants, list) and variants:
        if len(variants) == 1:
            return _check(variants[0], value, path, issues)
        for variant in variants:
            trial: list[Issue] = []
            coerced = _check(variant, value, path, trial)
            if not trial:
                return coerced
        issues.append(Issue(path, "Invalid input"))
        return value
    kind = prop.get("type")
    if value is _MISSING:
        if kind in ("string", "number", "integer", "boolean", "array") or (
            kind == "object" and prop.get("properties")
        ):
            issues.append(Issue(path, "Required", missing=True))
        return value
    if kind == "string":
        enum = prop.get("enum")
        if enum:
            expected = " | ".join(f"'{v}'" for v in enum)
            if not isinstance(value, str):
                issues.append(Issue(path, f"Expected {expected}, received {js_type(value)}"))
            elif value not in enum:
                issues.append(Issue(path, f"Invalid enum value. Expected {expected}, received '{value}'"))
        elif not isinstance(value, str):
            issues.append(Issue(path, f"Expected string, received {js_type(value)}"))
        return value
    if kind in ("number", "integer"):
        if js_type(value) != "number":
            issues.append(Issue(path, f"Expected number, received {js_type(value)}"))
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            issues.append(Issue(path, f"Expected boolean, received {js_type(value)}"))
        return value
    if kind == "array":
        value = _coerce_array(prop, value)
        if not isinstance(value, list):
            issues.append(Issue(path, f"Expected array, received {js_type(value)}"))
            return value
        items = prop.get("items")
        return [_check(items, item, (*path, i), issues) for i, item in enumerate(value)]
    if kind == "object" and prop.get("properties"):
        return _check_object(prop, value, path, issues)
    return value


def _coerce_array(prop: dict[str, Any], value: Any) -> Any:
    """The real server's preprocess: JSON-array strings, then comma-separated strings."""
    if not isinstance(value, str):
        return value
    trimmed = value.strip()
    if trimmed.startswith("["):
        try:
            parsed = json.loads(trimmed)
        except ValueError:
            return value
        return parsed if isinstance(parsed, list) else value
    items = prop.get("items") or {}
    variants = items.get("anyOf") or items.get("oneOf")
    accepts_string = items.get("type") == "string" or (
        isinstance(variants, list) and any(isinstance(v, dict) and v.get("type") == "string" for v in variants)
    )
    if accepts_string:
        return [part.strip() for part in trimmed.split(",") if part.strip()] if trimmed else []
    return value


def _check_object(schema: dict[str, Any], value: Any, path: tuple, issues: list[Issue]) -> Any:
    if not isinstance(value, dict):
        issues.append(Issue(path, f"Expected object, received {js_type(value)}"))
        return value
    required = set(schema.get("required") or [])
    out = dict(value)  # passthrough: unknown keys survive, and are ignored by handlers
    for key, prop in (schema.get("properties") or {}).items():
        present = key in value
        if not present and key not in required:
            continue
        coerced = _check(prop, value.get(key, _MISSING), (*path, key), issues)
        if present:
            out[key] = coerced
    return out


def validate_args(schema: dict[str, Any], args: dict[str, Any]) -> Validated:
    """Validate a tools/call `arguments` object against a tool's input schema."""
    if not schema.get("properties"):
        return Validated(ok=True, data=dict(args))
    issues: list[Issue] = []
    data = _check_object(schema, args, (), issues)
    if not issues:
        return Validated(ok=True, data=data)
    return Validated(ok=False, error_payload=_error_payload(schema, args, issues))


_WHOLE_DROP = (
    " Known intermittent client-side issue (plur-ai/plur#772, refines #297): some MCP clients transiently drop the "
    "ENTIRE arguments payload \u2014 most often when several tool calls are batched into a single message. Nothing "
    "was stored or evaluated. Retry the IDENTICAL call with the full payload, as the ONLY tool call in that message "
    "\u2014 identical retries typically succeed. If two identical retries fail the same way, the arguments really "
    "are absent from your call \u2014 re-issue it with the intended fields."
)
_WHOLE_DROP_ARRAYS = (
    ' If retries keep failing specifically on array parameters, pass them as a JSON string (e.g. tags: "[\\"a\\",'
    '\\"b\\"]") or a comma-separated string (tags: "a, b") \u2014 the server coerces both back into arrays.'
)
_PARTIAL_ARRAY_DROP = (
    " Known client-side bug (plur-ai/plur#297): some MCP clients drop array-typed parameters from a large arguments "
    "payload while keeping the earlier fields (here: {fields}). This is size-sensitive \u2014 the same call often "
    "succeeds with a shorter payload, so shrink the other fields (e.g. a briefer summary) as well. Retry passing "
    'array parameters as a JSON string (e.g. tags: "[\\"a\\",\\"b\\"]") or a comma-separated string (tags: "a, b")'
    " \u2014 the server coerces both back into arrays."
)
_WHOLE_DISPOSITION = (
    "The request reached the server but its arguments did not \u2014 do not abandon the call, and do not rewrite the "
    "payload: it was never evaluated. Retry the IDENTICAL call; it usually succeeds. If you issued several tool calls"
    " in one message, send them one per message \u2014 batching is the strongest correlate of this drop (#772)."
)
_PARTIAL_DISPOSITION = (
    "The call reached the server \u2014 this is a malformed-arguments error, not a transport failure. Fix the "
    "field(s) named above and retry; do not abandon the call."
)


def _error_payload(schema: dict[str, Any], args: dict[str, Any], issues: list[Issue]) -> dict[str, Any]:
    """The real server's `Invalid arguments` payload, key for key (`_isError` included)."""
    props = schema.get("properties") or {}
    received = list(args)
    details = ", ".join(f"{'.'.join(str(p) for p in i.path) or 'root'}: {i.message}" for i in issues)
    has_array_param = any(isinstance(p, dict) and p.get("type") == "array" for p in props.values())
    # The real one names the top-level key of every absent value, nested ones included.
    missing = [str(i.path[0]) for i in issues if i.missing and i.path and str(i.path[0])]
    missing_arrays = [k for k in missing if (props.get(k) or {}).get("type") == "array"]
    whole = not received
    partial = not whole and bool(missing)
    hint = ""
    if whole:
        hint = _WHOLE_DROP + (_WHOLE_DROP_ARRAYS if has_array_param else "")
    elif partial and missing_arrays:
        hint = _PARTIAL_ARRAY_DROP.replace("{fields}", ", ".join(missing_arrays))
    note = f"Received fields: [{', '.join(received)}]." if received else (
        "Received no fields (the arguments object was empty)."
    )
    disposition = _WHOLE_DISPOSITION if whole else _PARTIAL_DISPOSITION
    payload: dict[str, Any] = {
        "error": f"Invalid arguments: {details}. {note} {disposition}{hint}",
        "success": False,
        "received_fields": received,
        "missing_fields": missing,
    }
    if whole:
        payload["drop"] = "whole_payload"
    elif partial:
        payload["drop"] = "partial"
    payload["_isError"] = True
    return payload
