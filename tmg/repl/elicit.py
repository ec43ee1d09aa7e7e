"""The REPL's form for an MCP server's question (elicitation): the server's message, then one
line per field of its schema, answered in the terminal.

    tmg asks for MCP server booking: Who is the table for?
      [y] answer  [n] decline
      name (text, required): Ada
      guests (a whole number, required): 4

Nothing is sent unless the user chooses to answer; Ctrl-C or Ctrl-D anywhere declines. Keys typed
ahead while the answer streamed are dropped first (they were meant for the next prompt).
"""

from __future__ import annotations

from typing import Any, Callable

from tmg.environment import Environment
from tmg.repl.asking import drop_typeahead, printable, read_line

_TRIES = 3  # a field answered wrongly this many times declines the form
_KINDS = {"string": "text", "number": "a number", "integer": "a whole number", "boolean": "yes or no"}


class Declined(Exception):
    """The user declined (n, Ctrl-C, Ctrl-D, or a field never answered right)."""


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
            for name, field in (schema.get("properties") or {}).items():
                value = await self._field(name, field if isinstance(field, dict) else {}, name in required)
                if value is not None:
                    answers[name] = value
            return answers
        except Declined:
            self._say("  declined")
            return None

    async def _field(self, name: str, field: dict[str, Any], required: bool) -> Any:
        choices = field.get("enum")
        kind = f"one of {', '.join(map(str, choices))}" if choices else _KINDS.get(field.get("type", ""), "text")
        label = printable(str(field.get("title") or name))
        hint = printable(str(field.get("description") or ""))
        question = f"  {label} ({kind}{', required' if required else ''}){' - ' + hint if hint else ''}: "
        for _ in range(_TRIES):
            text = (await self._read(question)).strip()
            if not text:
                if not required:
                    return None
                self._say("  this one is required")
                continue
            value = _parse(text, field.get("type", "string"), choices)
            if value is not None:
                return value
            self._say(f"  that is not {kind}")
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


def _parse(text: str, kind: str, choices: list[Any] | None) -> Any:
    """The typed answer as the schema's type, or None when it is not one."""
    if choices:
        return text if text in map(str, choices) else None
    if kind == "boolean":
        return {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}.get(text.lower())
    if kind in ("number", "integer"):
        try:
            number = float(text) if kind == "number" else int(text)
        except ValueError:
            return None
        return number
    return text
