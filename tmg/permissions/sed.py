"""A sed script read command by command (GNU syntax), for what it runs and which files it touches.

`e CMD` runs CMD, a bare `e` or the `s///e` flag runs the text being edited, `w F`/`W F` and the
`s///w F` flag write F, `r F`/`R F` read F. Everything else only edits the stream. A script this
reader does not follow is None: the caller treats it as one that may do anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

_PLAIN = set("=dDgGhHnNpPxzF")
_S_FLAGS = set("gpiImM0123456789")


@dataclass(frozen=True)
class SedScript:
    runs: tuple[str, ...] = ()  # shell lines from `e CMD`
    executes: bool = False  # a bare `e` or `s///e`: what runs is the edited text itself
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()


@dataclass
class _Found:
    runs: list[str] = field(default_factory=list)
    executes: bool = False
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)


class _Unread(Exception):
    pass


@lru_cache(maxsize=256)
def read_sed(script: str) -> SedScript | None:
    found = _Found()
    try:
        _Reader(script, found).commands()
    except (_Unread, IndexError):
        return None
    return SedScript(tuple(found.runs), found.executes, tuple(found.writes), tuple(found.reads))


class _Reader:
    def __init__(self, text: str, found: _Found) -> None:
        self.text, self.at, self.found = text, 0, found

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def commands(self) -> None:
        while True:
            self._skip(" \t\n;")
            if self.at >= len(self.text):
                return
            if self.peek() == "#":
                self._to_end_of_line()
                continue
            self._address()
            if self.peek() == ",":
                self.at += 1
                self._address()
            self._skip(" \t")
            while self.peek() == "!":
                self.at += 1
                self._skip(" \t")
            self._command(self.text[self.at])

    def _command(self, c: str) -> None:
        self.at += 1
        if c in "{}" or c in _PLAIN:
            return
        if c in "aic":
            self._text_argument()
        elif c in ":btTv":
            self._label()
        elif c in "qQlL":
            self._skip(" \t")
            self._skip("0123456789")
        elif c in "rRwW":
            name = self._to_end_of_line().strip()
            (self.found.reads if c in "rR" else self.found.writes).append(name)
        elif c == "e":
            line = self._to_end_of_line().strip()
            if line:
                self.found.runs.append(line)
            else:
                self.found.executes = True
        elif c == "s":
            delimiter = self.text[self.at]
            if delimiter in "\n\\":
                raise _Unread
            self.at += 1
            self._part(delimiter)
            self._part(delimiter)
            self._s_flags()
        elif c == "y":
            delimiter = self.text[self.at]
            self.at += 1
            self._part(delimiter)
            self._part(delimiter)
        else:
            raise _Unread

    def _s_flags(self) -> None:
        while self.at < len(self.text) and self.peek() not in ";\n}":
            c = self.text[self.at]
            self.at += 1
            if c in _S_FLAGS or c in " \t":
                continue
            if c == "e":
                self.found.executes = True
            elif c == "w":
                self.found.writes.append(self._to_end_of_line().strip())
                return
            else:
                raise _Unread

    def _address(self) -> None:
        c = self.peek()
        if c.isdigit():
            self._skip("0123456789")
            if self.peek() == "~":
                self.at += 1
                self._skip("0123456789")
        elif c == "$":
            self.at += 1
        elif c in "+~":
            self.at += 1
            self._skip("0123456789")
        elif c == "/" or c == "\\":
            if c == "\\":
                self.at += 1
            delimiter = self.text[self.at]
            self.at += 1
            self._part(delimiter)
            self._skip("IM")

    def _part(self, delimiter: str) -> None:
        """Up to the unescaped `delimiter` (a regex or a replacement)."""
        while True:
            c = self.text[self.at]
            self.at += 1
            if c == "\\":
                self.at += 1
            elif c == delimiter:
                return
            elif c == "\n" and delimiter != "\n":
                raise _Unread

    def _text_argument(self) -> None:
        """a/i/c text: to the end of the line, and on over lines that end in a backslash."""
        while self.at < len(self.text):
            line = self._to_end_of_line()
            if not line.endswith("\\"):
                return

    def _label(self) -> None:
        while self.at < len(self.text) and self.peek() not in ";\n":
            self.at += 1

    def _to_end_of_line(self) -> str:
        end = self.text.find("\n", self.at)
        end = len(self.text) if end < 0 else end
        line, self.at = self.text[self.at:end], end + 1
        return line

    def _skip(self, chars: str) -> None:
        while self.at < len(self.text) and self.text[self.at] in chars:
            self.at += 1
