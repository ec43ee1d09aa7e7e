"""The REPL's form for an MCP server's question (elicitation): the server's message, then one
line per field of its schema, answered in the terminal; or, in URL mode, the page the server
wants the user to open.

    tmg asks for MCP server booking: Who is the table for?
      [y] answer  [n] decline
      name (text, required): Ada
      guests (a whole number, default 2):
      seating (one of inside, outside, default outside):

Enter on an empty line takes the field's `default` (MCP 2025-11-25: strings, numbers, integers,
booleans, single and multiple choices), or leaves an optional field out. Nothing is sent unless
the user chooses to answer; Ctrl-C or Ctrl-D anywhere declines. Keys typed ahead while the
answer streamed are dropped first (they were meant for the next prompt). A URL is shown with its
host and never opened by tmg: the user opens it, or declines.
"""

from __future__ import annotations

from typing import Any, Callable
from urllib.parse import urlsplit

from tmg.environment import Environment
from tmg.repl.asking import drop_typeahead, printable, read_line

_TRIES = 3  # a field answered wrongly this many times declines the form
_KINDS = {"string": "text", "number": "a number", "integer": "a whole number", "boolean": "yes or no"}
_YES_NO = {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}


class Declined(Exception):
    """The user declined (n, Ctrl-C, Ctrl-D, or a field never answered right)."""


class Field:
    """One property of a form's schema: how it is asked, shown and read back."""

    def __init__(self, name: str, schema: dict[str, Any], required: bool) -> None:
        self.schema = schema
        self.required = required
        self.type = str(schema.get("type") or "string")
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        self.many = self.type == "array"
        self.choices = _choices(items if self.many else schema)  # [(value, title)]; [] for free text
        self.label = printable(str(schema.get("title") or name))
        self.hint = printable(str(schema.get("description") or ""))
        self.has_default = "default" in schema

    @property
    def kind(self) -> str:
        if self.choices:
            titles = ", ".join(printable(title) for _value, title in self.choices)
            return f"{'any of' if self.many else 'one of'} {titles}{' (comma-separated)' if self.many else ''}"
        kind = _KINDS.get(self.type, "text")
        low, high = _number(self.schema.get("minimum")), _number(self.schema.get("maximum"))
        if self.type in ("number", "integer") and low is not None and high is not None:
            return f"{kind} from {low:g} to {high:g}"
        return kind

    def question(self) -> str:
        extra = ", required" if self.required else ""
        if self.has_default:
            extra += f", default {printable(self.shown(self.schema['default']))}"
        return f"  {self.label} ({self.kind}{extra}){' - ' + self.hint if self.hint else ''}: "

    def shown(self, value: Any) -> str:
        """A value as the user would type it (a choice by its title, a yes/no as such)."""
        if isinstance(value, list):
            return ", ".join(self.shown(v) for v in value)
        titles = dict(self.choices)
        if value in titles:
            return titles[value]
        if isinstance(value, bool):
            return "yes" if value else "no"
        return str(value)

    def parse(self, text: str) -> tuple[bool, Any]:
        """(True, the typed answer as the schema's type), or (False, None) when it is not one."""
        if self.many:
            values = [self._choice(part.strip()) for part in text.split(",") if part.strip()]
            return (all(v is not None for v in values) and bool(values)), values
        if self.choices:
            value = self._choice(text)
            return value is not None, value
        if self.type == "boolean":
            value = _YES_NO.get(text.lower())
            return value is not None, value
        if self.type in ("number", "integer"):
            try:
                number: float = float(text) if self.type == "number" else int(text)
            except ValueError:
                return False, None
            low, high = _number(self.schema.get("minimum")), _number(self.schema.get("maximum"))
            fits = (low is None or number >= low) and (high is None or number <= high)
            return fits, number
        return True, text

    def _choice(self, text: str) -> Any:
        """The choice whose value or title the user typed (a title in any case)."""
        for value, title in self.choices:
            if text in (str(value), title):
                return value
        folded = [value for value, title in self.choices if text.lower() in (str(value).lower(), title.lower())]
        return folded[0] if len(folded) == 1 else None


def _number(value: Any) -> float | None:
    """A schema's bound when it is a number (a malformed one bounds nothing)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _choices(schema: dict[str, Any]) -> list[tuple[Any, str]]:
    """The values a field may take, each with its title: `enum` (with the legacy `enumNames`),
    or `oneOf`/`anyOf` of `{const, title}` (titled choices)."""
    if isinstance(schema.get("enum"), list):
        names = schema.get("enumNames") if isinstance(schema.get("enumNames"), list) else []
        return [(v, str(names[i]) if i < len(names) else str(v)) for i, v in enumerate(schema["enum"])]
    options = schema.get("oneOf") or schema.get("anyOf")
    if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
        return [(o["const"], str(o.get("title") or o["const"])) for o in options]
    return []


class ElicitForm:
    def __init__(self, envr: Environment, before: Callable[[], None] = lambda: None) -> None:
        self._envr = envr
        self._before = before  # makes the answer so far final: the form goes below it

    async def __call__(self, server: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        self._before()
        drop_typeahead(self._envr)
        self._say(f"\ntmg asks for MCP server {server}: {printable(message)}\n  [y] answer  [n] decline")
        try:
            if (await self._read("answer? [y/n] ")).strip().lower()[:1] != "y":
                raise Declined
            required = set(schema.get("required") or ())
            answers: dict[str, Any] = {}
            for name, spec in (schema.get("properties") or {}).items():
                field = Field(str(name), spec if isinstance(spec, dict) else {}, name in required)
                answered, value = await self._field(field)
                if answered:
                    answers[name] = value
            return answers
        except Declined:
            self._say("  declined")
            return None

    async def open_url(self, server: str, message: str, url: str) -> bool:
        """URL mode: the page the server wants opened, its host said apart; True when the user
        will open it (tmg opens nothing itself)."""
        self._before()
        drop_typeahead(self._envr)
        host = urlsplit(url).hostname or "?"
        self._say(f"\ntmg asks for MCP server {server}: {printable(message)}\n"
                  f"  it asks you to open a page on {printable(host)}: {printable(url)}\n"
                  "  tmg opens nothing itself: [y] I will open it  [n] decline")
        line = await read_line("open it? [y/n] ")
        if line is not None and line.strip().lower()[:1] == "y":
            return True
        self._say("  declined")
        return False

    async def _field(self, field: Field) -> tuple[bool, Any]:
        """(True, the answer) or (False, None) for an optional field left out."""
        for _ in range(_TRIES):
            text = (await self._read(field.question())).strip()
            if not text:
                if field.has_default:
                    return True, field.schema["default"]
                if not field.required:
                    return False, None
                self._say("  this one is required")
                continue
            ok, value = field.parse(text)
            if ok:
                return True, value
            self._say(f"  that is not {field.kind}")
        raise Declined

    async def _read(self, message: str) -> str:
        line = await read_line(message)
        if line is None:  # Ctrl-C or Ctrl-D: the form is declined
            raise Declined
        return line

    def _say(self, text: str) -> None:
        out = self._envr.stdout
        out.write(text + "\n")
        out.flush()
