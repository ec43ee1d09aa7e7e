"""PLUR's JSON results as typed values.

A result that does not have the expected shape is a failure (`ResultError`), never a silent
empty value: "inject current recall or nothing".
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

# An engram line in inject text: `[ID] statement` at column 0; metadata lines are indented.
_LINE = re.compile(r"^\[([^\]\s]+)\] ?(.*)$")


class ResultError(ValueError):
    """The server answered without isError, but not with the shape this tool returns."""


class ServerError(NamedTuple):
    """An isError result: the server's message and, for validation errors, the fields it names."""

    message: str
    missing_fields: tuple[str, ...] = ()
    received_fields: tuple[str, ...] = ()


class Engram(NamedTuple):
    """An engram with its full statement (from recall or learn)."""

    id: str
    statement: str
    type: str | None = None
    scope: str | None = None


class InjectLine(NamedTuple):
    """One engram in an inject text bucket: its id and the words the bucket carries for it."""

    id: str
    text: str


class InjectResult(NamedTuple):
    """plur_inject_hybrid: the two text buckets, and every selected id.

    Ids in `injected_ids` but in neither bucket are the constraints the server leaves out of its
    text (`ids_without_text`): their words must be resolved (recall) before they reach the model.
    """

    directives: tuple[InjectLine, ...]
    consider: tuple[InjectLine, ...]
    injected_ids: tuple[str, ...]
    count: int
    tokens_used: int

    @property
    def ids_in_text(self) -> frozenset[str]:
        return frozenset(line.id for line in self.directives + self.consider)

    @property
    def ids_without_text(self) -> tuple[str, ...]:
        shown = self.ids_in_text
        return tuple(i for i in self.injected_ids if i not in shown)


class BatchResult(NamedTuple):
    """plur_learn_batch: one id per input (None where that item failed), and the failures."""

    ids: tuple[str | None, ...]
    failures: tuple[dict[str, Any], ...] = ()
    warning: str | None = None


class Episode(NamedTuple):
    id: str
    summary: str
    timestamp: str | None = None
    agent: str | None = None


class Status(NamedTuple):
    engram_count: int
    episode_count: int
    raw: dict[str, Any]  # the whole answer, for what the fields above leave out


def _object(data: Any, tool: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ResultError(f"{tool}: expected a JSON object, got {type(data).__name__}")
    return data


def _string(data: dict[str, Any], key: str, tool: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ResultError(f"{tool}: missing {key!r}")
    return value


def _list(data: dict[str, Any], key: str, tool: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list):
        raise ResultError(f"{tool}: {key!r} is not a list")
    return value


def parse_error(data: Any, text: str) -> ServerError:
    """The message and named fields of an isError result (any shape: text falls back to itself)."""
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return ServerError(
            data["error"],
            tuple(str(f) for f in data.get("missing_fields") or ()),
            tuple(str(f) for f in data.get("received_fields") or ()),
        )
    return ServerError(text.strip() or "isError with no text")


def _refused(obj: dict[str, Any], tool: str) -> None:
    """Some handlers answer a refusal as a plain result (`success: false`), not with isError."""
    if obj.get("success") is False:
        raise ResultError(f"{tool}: {obj.get('error') or 'refused'}")


def parse_learn(data: Any) -> str:
    """plur_learn -> the engram id (the existing one for an exact duplicate). A refusal without
    isError (e.g. `pinned_quota_exceeded`: the pinned set is full) is a failed write."""
    obj = _object(data, "plur_learn")
    _refused(obj, "plur_learn")
    return _string(obj, "id", "plur_learn")


def parse_learn_batch(data: Any) -> BatchResult:
    obj = _object(data, "plur_learn_batch")
    ids = _list(obj, "ids", "plur_learn_batch")
    if not all(i is None or isinstance(i, str) for i in ids):
        raise ResultError("plur_learn_batch: 'ids' holds something other than ids")
    failures = obj.get("failures") or []
    warning = obj.get("warning") if isinstance(obj.get("warning"), str) else None
    return BatchResult(tuple(ids), tuple(f for f in failures if isinstance(f, dict)), warning)


def parse_capture(data: Any) -> Episode:
    obj = _object(data, "plur_capture")
    return Episode(_string(obj, "id", "plur_capture"), str(obj.get("summary", "")), obj.get("timestamp"))


def parse_recall(data: Any) -> list[Engram]:
    """plur_recall -> engrams with their full statements."""
    rows = _list(_object(data, "plur_recall"), "results", "plur_recall")
    engrams = []
    for row in rows:
        row = _object(row, "plur_recall")
        engrams.append(Engram(_string(row, "id", "plur_recall"), str(row.get("statement", "")),
                              row.get("type"), row.get("scope")))
    return engrams


def parse_inject_text(text: str) -> tuple[InjectLine, ...]:
    """`[ID] words` lines of an inject bucket; indented metadata lines are not engrams."""
    lines = []
    for raw in text.splitlines():
        match = _LINE.match(raw)
        if match:
            lines.append(InjectLine(match.group(1), match.group(2)))
    return tuple(lines)


def parse_inject(data: Any) -> InjectResult:
    obj = _object(data, "plur_inject_hybrid")
    ids = _list(obj, "injected_ids", "plur_inject_hybrid")
    if not all(isinstance(i, str) for i in ids):
        raise ResultError("plur_inject_hybrid: 'injected_ids' holds something other than ids")
    for key in ("directives", "consider"):
        if not isinstance(obj.get(key, ""), str):
            raise ResultError(f"plur_inject_hybrid: {key!r} is not text")
    return InjectResult(
        directives=parse_inject_text(obj.get("directives") or ""),
        consider=parse_inject_text(obj.get("consider") or ""),
        injected_ids=tuple(ids),
        count=_count(obj, "count", len(ids), "plur_inject_hybrid"),
        tokens_used=_count(obj, "tokens_used", 0, "plur_inject_hybrid"),
    )


def _count(data: dict[str, Any], key: str, default: int, tool: str) -> int:
    """A whole number (an int, or a numeric string or float); missing or empty is `default`."""
    value = data.get(key)
    if value is None or value == "" or value == 0:
        return default
    if isinstance(value, bool):
        raise ResultError(f"{tool}: {key!r} is not a number")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise ResultError(f"{tool}: {key!r} is not a number") from None


def parse_status(data: Any) -> Status:
    obj = _object(data, "plur_status")
    engrams, episodes = obj.get("engram_count"), obj.get("episode_count")
    if not isinstance(engrams, int) or not isinstance(episodes, int):
        raise ResultError("plur_status: missing counts")
    return Status(engrams, episodes, obj)


def parse_timeline(data: Any) -> list[Episode]:
    rows = _list(_object(data, "plur_timeline"), "episodes", "plur_timeline")
    return [
        Episode(_string(r, "id", "plur_timeline"), str(r.get("summary", "")), r.get("timestamp"), r.get("agent"))
        for r in (_object(r, "plur_timeline") for r in rows)
    ]


def parse_pinned(data: Any) -> list[Engram]:
    """plur_pin {list: true} -> the pinned engrams with their statements."""
    rows = _list(_object(data, "plur_pin"), "pinned", "plur_pin")
    return [Engram(_string(r, "id", "plur_pin"), str(r.get("statement", "")), r.get("type"), r.get("scope"))
            for r in (_object(r, "plur_pin") for r in rows)]


def parse_pin(data: Any) -> dict[str, Any]:
    """plur_pin {id, pinned} -> its result object (the server says what it did)."""
    obj = _object(data, "plur_pin")
    _refused(obj, "plur_pin")
    return obj


def parse_forget(data: Any) -> Engram:
    """plur_forget -> the retired engram."""
    obj = _object(data, "plur_forget")
    _refused(obj, "plur_forget")
    retired = _object(obj.get("retired"), "plur_forget")
    return Engram(_string(retired, "id", "plur_forget"), str(retired.get("statement", "")))
