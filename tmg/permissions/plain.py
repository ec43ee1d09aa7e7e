"""Lines so plain that bash reads them by whitespace and list operators alone.

`git status`, `npm test`, `ls -la src && wc -l a.py | sort -n`: no quotes, no expansions, no
redirections, no globs, no comments, no assignment in front, no reserved word. Such a line is
cut here without building bashlex's tables of it (a third of a millisecond on each call); any
other line goes to bashlex. A property test holds the two readings together.
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[A-Za-z0-9_./:,+@%^=\s|&;-]*")
_OPERATOR = re.compile(r"(\|\||&&|\||;|&)")
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
                       "function", "select", "time", "coproc", "in", "!", "{", "}", "[[", "]]"})


def plain_commands(line: str) -> list[tuple[tuple[str, ...], bool]] | None:
    """The simple commands of a plain line, each with whether a pipe feeds it; None when the
    line is not plain (bashlex reads it)."""
    if not _PLAIN.fullmatch(line) or "\n" in line or "|&" in line or ";;" in line:
        return None
    out: list[tuple[tuple[str, ...], bool]] = []
    before = ""  # the operator before this piece
    pieces = _OPERATOR.split(line)
    for i in range(0, len(pieces), 2):
        words = tuple(pieces[i].split())
        operator = pieces[i + 1] if i + 1 < len(pieces) else ""
        if not words:
            if operator or i == 0 or before not in (";", "&"):
                return None  # `| x`, `a && && b`, `a &&`: bashlex says what is wrong
            break  # a trailing `;` or `&`
        if "=" in words[0] or words[0] in _RESERVED:
            return None  # an assignment in front, or a compound command
        out.append((words, before == "|"))
        before = operator
    return out or None
