"""Lines so plain that bash reads them as words and list operators alone.

`git status`, `npm test`, `git commit -m "fix the parser"`, `awk '{print $1}' f | sort -n`: words
of letters, digits and the like, quoted with '...' or with "..." holding no `$`, backquote or
backslash; `&&`, `||`, `|`, `;`, `&` between commands; a `#` comment. No expansion, redirection,
assignment in front or reserved word. Such a line is cut here, without building bashlex's tables
of it (most of a check's time); any other line goes to bashlex. A property test holds the two
readings together.
"""

from __future__ import annotations

_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
                       "function", "select", "time", "coproc", "in", "!", "{", "}", "[[", "]]"})
_WORD = frozenset("_./:,+@%^=~*?[]{}-#")  # beside letters and digits; `#` starts a comment only before a word
_BAD_PAIRS = ("|&", ";;", ";&", "&>", "&;", "&|")


def plain_commands(line: str) -> list[tuple[tuple[str, ...], bool]] | None:
    """The simple commands of a plain line (words unquoted), each with whether a pipe feeds it;
    None when the line is not plain (bashlex reads it)."""
    tokens = _tokens(line)
    if tokens is None:
        return None
    out: list[tuple[tuple[str, ...], bool]] = []
    words: list[str] = []
    before = ""  # the operator before the command being gathered
    for kind, text in tokens + [("op", "")]:
        if kind == "w":
            words.append(text)
            continue
        if not words:
            if text or not out or before not in (";", "&"):
                return None  # `| x`, `a && && b`, `a &&`: bashlex says what is wrong
            break
        if "=" in words[0] or words[0] in _RESERVED:
            return None  # an assignment in front, or a compound command
        out.append((tuple(words), before == "|"))
        words, before = [], text
    return out or None


def _tokens(line: str) -> list[tuple[str, str]] | None:
    """("w", an unquoted word) and ("op", an operator), or None for anything else."""
    tokens: list[tuple[str, str]] = []
    word: list[str] | None = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t":
            if word is not None:
                tokens.append(("w", "".join(word)))
                word = None
            i += 1
        elif c == "#" and word is None:
            break  # a comment, to the end of the line
        elif c in "&|;":
            if word is not None:
                tokens.append(("w", "".join(word)))
                word = None
            pair = line[i:i + 2]
            if pair in _BAD_PAIRS:
                return None
            width = 2 if pair in ("&&", "||") else 1
            tokens.append(("op", line[i:i + width]))
            i += width
        elif c in "'\"":
            end = line.find(c, i + 1)
            if end < 0:
                return None
            inside = line[i + 1:end]
            if c == '"' and any(ch in inside for ch in "$`\\!"):
                return None  # an expansion, or an escape, inside double quotes
            word = (word or []) + [inside]
            i = end + 1
        elif (c.isalnum() and c.isprintable()) or c in _WORD:
            word = (word or []) + [c]
            i += 1
        else:
            return None  # `$`, a backquote, a backslash, a redirection, parentheses, a newline, ...
    if word is not None:
        tokens.append(("w", "".join(word)))
    return tokens
