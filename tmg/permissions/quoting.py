"""How the shell passes a word on: quotes removed, `$'...'` decoded, and whether the word means
exactly its text (no expansion inside)."""

from __future__ import annotations

import shlex
from functools import lru_cache


def is_literal(word, line: str = "") -> bool:
    """True when the bashlex word means exactly its text: no expansion or substitution inside (a
    `~` counts as its text, the checks read it as the home folder as the shell will). The word's
    own text decides, not bashlex's parts: `$'\\x72m'` is quoting, `0'$'` holds no expansion."""
    parts = getattr(word, "parts", None) or ()
    if line:  # its own text decides: bashlex misreads `~$(cmd)` and `''$(cmd)''` as plain text
        return _only_quoting(line[word.pos[0]:word.pos[1]])
    return all(part.kind == "tilde" for part in parts)


def unquoted(word, line: str) -> str | None:
    """A literal word as the shell passes it on, from its source text: bashlex's own quote
    removal is wrong for mixed quoting (`"r"'m'` would stay `r'm'`, and `bash -c` scripts
    quoted `'\\''`-style would be misread). POSIX rules via shlex, `$'\\x72m'` decoded."""
    return unquoted_text(line[word.pos[0]:word.pos[1]])


@lru_cache(maxsize=2048)
def unquoted_text(raw: str) -> str | None:
    if not any(c in raw for c in "'\"\\ \t\n"):
        return raw  # nothing to remove: the word is its text
    read = _requote(raw)
    if read is None:
        return None
    try:
        tokens = shlex.split(read[0])
    except ValueError:
        return None
    return tokens[0] if len(tokens) == 1 else None


@lru_cache(maxsize=2048)
def _only_quoting(raw: str) -> bool:
    """The word has no `$`, backquote or `<(` outside single quotes but for `$'...'` and `$"..."` quoting."""
    read = _requote(raw)
    return read is not None and not read[1]


def _requote(raw: str) -> tuple[str, bool, bool] | None:
    """(`raw` with its `$'...'` decoded and re-quoted, `$"` made `"`, for shlex; whether a `$` or
    a backquote outside single quotes expands; whether `$'` or `$"` quoting was used), or None
    when a quote is not closed or a `$'...'` cannot be decoded."""
    out: list[str] = []
    expands = ansi = False
    quote = ""
    i = 0
    while i < len(raw):
        c = raw[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\" and i + 1 < len(raw):
            out.append(raw[i:i + 2])
            i += 2
            continue
        elif quote == '"':
            quote = "" if c == '"' else quote
            expands = expands or c in "$`"
        elif raw.startswith("$'", i):
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
            ansi, i = True, end + 1
            continue
        elif raw.startswith('$"', i):
            ansi, i = True, i + 1  # the `"` opens a double quote next
            continue
        elif c in "'\"":
            quote = c
        elif c in "$`" or raw.startswith(("<(", ">("), i):
            expands = True
        out.append(c)
        i += 1
    return None if quote else ("".join(out), expands, ansi)


def substitutions(raw: str) -> list[str]:
    """The commands of the `$(...)` and backquotes in a word's text, outside single quotes (for
    what bashlex misreads: `~$(cmd)`, `''$(cmd)''`)."""
    out: list[str] = []
    quote, i = "", 0
    while i < len(raw):
        c = raw[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1
        elif c == "'" and not quote:
            quote = "'"
        elif c == '"':
            quote = "" if quote == '"' else '"'
        elif raw.startswith("$(", i) and not raw.startswith("$((", i):
            depth, j = 1, i + 2
            while j < len(raw) and depth:
                depth += {"(": 1, ")": -1}.get(raw[j], 0)
                j += 1
            out.append(raw[i + 2:j - 1])
            i = j
            continue
        elif c == "`":
            end = raw.find("`", i + 1)
            out.append(raw[i + 1:end if end > 0 else len(raw)])
            i = len(raw) if end < 0 else end + 1
            continue
        i += 1
    return out
