"""Lines so plain that bash reads them as words and list operators alone.

`git status`, `npm test`, `git commit -m "fix the parser"`, `awk '{print $1}' f | sort -n`,
`echo $(git rev-parse HEAD)`: words of letters, digits and the like, quoted with '...' or with
"..." holding no `$`, backquote or backslash, or holding a `$(...)` of a plain line; `&&`, `||`,
`|`, `;`, `&` between commands; a `#` comment. No other expansion, no redirection, assignment in
front or reserved word. Such a line is cut here, without building bashlex's tables of it (most
of a check's time); any other line goes to bashlex. A property test holds the two readings
together, down to the order of the commands (a substitution's before the command it is in).
"""

from __future__ import annotations

Command = tuple[tuple[str, ...], tuple[bool, ...], bool]  # words, which are literal, whether a pipe feeds it

_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
                       "function", "select", "time", "coproc", "in", "!", "{", "}", "[[", "]]"})
_WORD = frozenset("_./:,+@%^=~*?[]{}-#")  # beside letters and digits; `#` starts a comment only before a word
_BAD_PAIRS = ("|&", ";;", ";&", "&>", "&;", "&|")
MAX_NESTING = 4


class _NotPlain(Exception):
    pass


def plain_commands(line: str) -> list[Command] | None:
    """The simple commands of a plain line (words unquoted), in the order bash runs them; None
    when the line is not plain (bashlex reads it)."""
    first = line.split(None, 1)[:1]
    if any(c in line for c in "<>`\n") or not first or first[0] in _RESERVED:
        return None  # a redirection, a backquote, lines, a compound command (even quoted: rare)
    try:
        return _commands(line, 0)
    except _NotPlain:
        return None


def _commands(line: str, depth: int) -> list[Command]:
    if depth > MAX_NESTING:
        raise _NotPlain
    out: list[Command] = []
    words: list[tuple[str, bool]] = []
    inner: list[Command] = []  # the commands of substitutions in the words being gathered
    before = ""  # the operator before the command being gathered
    for token in _tokens(line, depth) + [("op", "", True, [])]:
        kind, text, literal, found = token
        if kind == "w":
            words.append((text, literal))
            inner.extend(found)
            continue
        if not words:
            if text or not out or before not in (";", "&"):
                raise _NotPlain  # `| x`, `a && && b`, `a &&`: bashlex says what is wrong
            break
        name, name_literal = words[0]
        if "=" in name or name in _RESERVED or not name_literal:
            raise _NotPlain  # an assignment in front, a compound command, a name from an expansion
        out.extend(inner)
        out.append((tuple(w for w, _ in words), tuple(lit for _, lit in words), before == "|"))
        words, inner, before = [], [], text
    if not out:
        raise _NotPlain
    return out


def _tokens(line: str, depth: int) -> list[tuple[str, str, bool, list[Command]]]:
    """(kind, text, literal, commands inside): words unquoted (a substitution kept as written, as
    bashlex keeps it) and operators; _NotPlain for anything else."""
    tokens: list[tuple[str, str, bool, list[Command]]] = []
    word: list[str] | None = None
    literal, inside = True, []
    i, n = 0, len(line)

    def end_word() -> None:
        nonlocal word, literal, inside
        if word is not None:
            tokens.append(("w", "".join(word), literal, inside))
        word, literal, inside = None, True, []

    while i < n:
        c = line[i]
        if c in " \t":
            end_word()
            i += 1
        elif c == "#" and word is None:
            break  # a comment, to the end of the line
        elif c in "&|;":
            end_word()
            pair = line[i:i + 2]
            if pair in _BAD_PAIRS:
                raise _NotPlain
            width = 2 if pair in ("&&", "||") else 1
            tokens.append(("op", line[i:i + width], True, []))
            i += width
        elif c in "'\"":
            end = line.find(c, i + 1)
            if end < 0 or (c == '"' and any(ch in line[i + 1:end] for ch in "$`\\!")):
                raise _NotPlain  # not closed, or an expansion or escape inside double quotes
            word = (word or []) + [line[i + 1:end]]
            i = end + 1
        elif line.startswith("$(", i) and not line.startswith("$((", i):
            end = _closing(line, i + 2)
            inside = inside + _commands(line[i + 2:end], depth + 1)
            word, literal = (word or []) + [line[i:end + 1]], False
            i = end + 1
        elif (c.isalnum() and c.isprintable()) or c in _WORD:
            word = (word or []) + [c]
            i += 1
        else:
            raise _NotPlain  # `$`, a backquote, a backslash, a redirection, parentheses, a newline, ...
    end_word()
    return tokens


def _closing(line: str, start: int) -> int:
    """The index of the `)` that closes a `$(` whose text starts at `start`."""
    depth, i = 1, start
    while i < len(line):
        c = line[i]
        if c in "'\"":
            end = line.find(c, i + 1)
            if end < 0:
                raise _NotPlain
            i = end + 1
            continue
        if line.startswith("$(", i):
            depth, i = depth + 1, i + 2
            continue
        if c == ")":
            depth -= 1
            if depth == 0:
                return i
        elif c == "(":
            raise _NotPlain
        i += 1
    raise _NotPlain
