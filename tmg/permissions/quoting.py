"""How the shell passes a word on: quotes removed, `$'...'` decoded, and whether the word means
exactly its text (no expansion inside)."""

from __future__ import annotations

import re
import shlex


def is_literal(word, line: str = "") -> bool:
    """True when the bashlex word means exactly its text: no expansion or substitution inside (a
    `~` counts as its text, the checks read it as the home folder as the shell will), and no
    `$'...'` that is more than quoting."""
    parts = getattr(word, "parts", None) or ()
    if all(part.kind == "tilde" for part in parts):
        return True
    return bool(line) and _only_quoting(line[word.pos[0]:word.pos[1]])


def unquoted(word, line: str) -> str | None:
    """A literal word as the shell passes it on, from its source text: bashlex's own quote
    removal is wrong for mixed quoting (`"r"'m'` would stay `r'm'`, and `bash -c` scripts
    quoted `'\\''`-style would be misread). POSIX rules via shlex, `$'\\x72m'` decoded."""
    return unquoted_text(line[word.pos[0]:word.pos[1]])


def unquoted_text(raw: str) -> str | None:
    if not any(c in raw for c in "'\"\\ \t\n"):
        return raw  # nothing to remove: the word is its text
    if "$'" in raw or '$"' in raw:
        raw = _ansi_c(raw)
        if raw is None:
            return None
    try:
        tokens = shlex.split(raw)
    except ValueError:
        return None
    return tokens[0] if len(tokens) == 1 else None


def _only_quoting(raw: str) -> bool:
    """`$'\\x72m'` and `$"rm"` are quoting: the word has no other `$` or backquote."""
    if "$'" not in raw and '$"' not in raw:
        return False
    rest = re.sub(r"\$'(?:[^'\\]|\\.)*'", "", raw).replace('$"', '"')
    return "$" not in rest and "`" not in rest


def _ansi_c(raw: str) -> str | None:
    """`$'...'` segments decoded (bash's ANSI-C quoting) and re-quoted for shlex; `$"..."` is `"..."`."""
    out, i = [], 0
    while i < len(raw):
        if raw.startswith("$'", i):
            end = i + 2
            while end < len(raw) and raw[end] != "'":
                end += 2 if raw[end] == "\\" else 1
            if end >= len(raw):
                return None
            try:
                text = raw[i + 2:end].encode("latin-1", "backslashreplace").decode("unicode_escape")
            except (UnicodeDecodeError, ValueError):
                return None
            out.append(shlex.quote(text))
            i = end + 1
        elif raw.startswith('$"', i):
            i += 1
        else:
            out.append(raw[i])
            i += 1
    return "".join(out)
