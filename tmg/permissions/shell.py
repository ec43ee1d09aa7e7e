"""A shell command line split into the simple commands it would run, for the permission engine.

`git status && rm -rf y` is two commands, and each must be allowed for the line to be. The line
is parsed by bashlex (a port of bash's own grammar), never split by hand: pipes, `&&`, `;`,
subshells, command and process substitution, functions and loops all come apart into the
simple commands inside them. Wrappers that run another command (`env X=1 rm`, `nice rm`,
`xargs rm`, `find -exec rm`, `bash -c 'rm'`, `sudo rm`) are looked through, so a rule about `rm`
cannot be bypassed by wrapping it. Whatever cannot be read with certainty (syntax bashlex does
not know, a command name that comes from a variable, `PATH=` in front of a command) is a
`problem`: the engine then asks, whatever the rules allow (it still denies what a rule denies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

MAX_DEPTH = 4  # bash -c 'bash -c "..."' nesting looked into; deeper is a problem

# Wrappers that run their arguments as the command (after their own options): the inner command
# is what a rule judges. Each maps to the options that take a value.
_TRANSPARENT: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "ionice": frozenset({"-c", "-n", "-p", "-t"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "xargs": frozenset({"-I", "-i", "-n", "-L", "-l", "-P", "-d", "-E", "-e", "-s", "-a", "--arg-file",
                        "--delimiter", "--max-args", "--max-lines", "--max-procs", "--replace", "--max-chars",
                        "--eof", "--process-slot-var"}),
}
# Run the command as someone else: the whole line needs its own rule (`sudo apt update`), and a
# deny or ask about the inner command applies too.
_PRIVILEGED = {"sudo", "doas", "pkexec", "runuser"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "busybox"}
# Assignments in front of a command that change which program runs or what it loads.
_HIJACKING = {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "IFS", "PYTHONPATH",
              "PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "GIT_EXEC_PATH", "GIT_SSH_COMMAND",
              "SHELLOPTS", "PS4", "PROMPT_COMMAND"}
_HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}
_OUTPUT_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}
_EXPANSION_MARKS = ("$(", "`", "<(", ">(")


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[str, ...]  # as it runs: wrappers looked through, quotes removed
    judged_only: bool = False  # a deny or ask about it counts, but it needs no allow of its own (sudo's inner)

    @property
    def text(self) -> str:
        import shlex

        return shlex.join(self.words)


@dataclass
class Split:
    commands: list[SimpleCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # files written by redirection (`> out.txt`)
    problem: str | None = None  # why the line cannot be judged part by part (then it asks)

    def trouble(self, why: str) -> None:
        if self.problem is None:
            self.problem = why


def prewarm() -> None:
    """Import the parser now (on a thread): building its tables takes ~0.3 s, once per process,
    better spent while the user types than at the first shell call."""
    import bashlex  # noqa: F401


@lru_cache(maxsize=256)
def split_command(line: str) -> Split:
    """The simple commands `line` runs, the files it redirects into, and any problem reading it
    (cached by line: the model repeats itself, and a Split is never changed once made)."""
    split = Split()
    _split_into(line, split, 0)
    if not split.commands and split.problem is None and line.strip():
        split.trouble("it runs no command tmg can name")
    return split


def _split_into(line: str, split: Split, depth: int) -> None:
    if depth > MAX_DEPTH:
        split.trouble("it nests shells too deeply to check")
        return
    import bashlex  # only a shell command pays for the parser

    try:
        trees = bashlex.parse(line)
    except Exception as exc:  # noqa: BLE001 - bashlex raises several types for what it cannot read
        split.trouble(f"it does not parse cleanly ({type(exc).__name__}: {exc})")
        return
    for tree in trees:
        _walk(tree, line, split, depth)


def _walk(node, line: str, split: Split, depth: int) -> None:
    kind = node.kind
    if kind == "command":
        _command(node, line, split, depth)
        return
    if kind in ("commandsubstitution", "processsubstitution"):
        _walk(node.command, line, split, depth)
        return
    if kind == "parameter":
        if any(mark in node.value for mark in _EXPANSION_MARKS):  # `${X:-$(rm y)}`: bashlex leaves it unread
            split.trouble("it has a command inside a parameter expansion")
        return
    if kind == "heredoc":
        if any(mark in node.value for mark in ("$(", "`")):
            split.trouble("it has a command inside a here-document")
        return
    if kind == "redirect":
        _redirect(node, line, split, depth)
        return
    for child in _children(node):
        _walk(child, line, split, depth)


def _children(node) -> list:
    out = []
    for name in ("parts", "list"):
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(value)
    for name in ("command", "output", "heredoc"):
        value = getattr(node, name, None)
        if value is not None and hasattr(value, "kind"):
            out.append(value)
    return out


def _redirect(node, line: str, split: Split, depth: int) -> None:
    target = getattr(node, "output", None)
    heredoc = getattr(node, "heredoc", None)
    if heredoc is not None:
        _walk(heredoc, line, split, depth)
    if target is None or not hasattr(target, "kind"):
        return  # `2>&1`: a descriptor, not a file
    _walk(target, line, split, depth)  # `> $(rm z)` runs rm
    if node.type in _OUTPUT_REDIRECTS and target.word not in _HARMLESS_TARGETS:
        split.writes.append(target.word)


def _literal(word) -> bool:
    """True when the word means exactly its text (no expansion, no substitution inside)."""
    return not getattr(word, "parts", None)


def _command(node, line: str, split: Split, depth: int) -> None:
    words: list = []
    for part in node.parts:
        if part.kind == "assignment":
            name = part.word.split("=", 1)[0]
            if name in _HIJACKING and not words:
                split.trouble(f"it sets {name}, which changes what the command runs")
            _walk_inside(part, line, split, depth)
        elif part.kind == "word":
            words.append(part)
            _walk_inside(part, line, split, depth)
        else:  # redirections
            _walk(part, line, split, depth)
    if not words:
        return  # `x=1`: assignments only
    if not _literal(words[0]):
        split.trouble(f"its command name {words[0].word!r} comes from an expansion")
        return
    texts = []
    for word in words:
        text = _unquoted(word, line) if _literal(word) else word.word
        if text is None:
            split.trouble(f"its word {line[word.pos[0]:word.pos[1]]!r} is quoted in a way tmg cannot read")
            return
        texts.append(text)
    _judge_words(texts, [_literal(w) for w in words], split, depth, judged_only=False)


def _unquoted(word, line: str) -> str | None:
    """A literal word as the shell passes it on, from its source text: bashlex's own quote
    removal is wrong for mixed quoting (`"r"'m'` would stay `r'm'`, and `bash -c` scripts
    quoted `'\''`-style would be misread). POSIX rules via shlex; `$'...'` is not read."""
    import shlex

    raw = line[word.pos[0]:word.pos[1]]
    if "$'" in raw or '$"' in raw:
        return None
    try:
        tokens = shlex.split(raw)
    except ValueError:
        return None
    return tokens[0] if len(tokens) == 1 else None


def _walk_inside(word, line: str, split: Split, depth: int) -> None:
    for child in getattr(word, "parts", None) or []:
        _walk(child, line, split, depth)


def _judge_words(words: list[str], literal: list[bool], split: Split, depth: int, judged_only: bool) -> None:
    """Add the command `words` runs, looking through wrappers."""
    name = words[0]
    base = name.rsplit("/", 1)[-1]
    if base in _TRANSPARENT:
        at = _after_options(words, 1, _TRANSPARENT[base], assignments=base == "env")
        if base == "timeout" and at is not None:
            at = at + 1 if at < len(words) else None  # the duration
        if base == "env" and any(w in ("-S", "--split-string") or w.startswith("--split-string=") for w in words[1:at]):
            split.trouble("env -S splits a string into a command")
            return
        if at is None:
            split.trouble(f"{base} has options tmg cannot read")
            return
        if at >= len(words):
            split.commands.append(SimpleCommand(tuple(words), judged_only))  # `env` alone prints
            return
        if base == "env":
            for assignment in words[1:at]:
                if assignment.split("=", 1)[0] in _HIJACKING:
                    split.trouble(f"it sets {assignment.split('=', 1)[0]}, which changes what the command runs")
        _inner(words, literal, at, split, depth, judged_only)
        return
    if base in _PRIVILEGED:
        split.commands.append(SimpleCommand(tuple(words), judged_only))
        at = _first_plain(words, 1)
        if at is None:
            split.trouble(f"{base} has options tmg cannot read")
        elif at < len(words):
            _inner(words, literal, at, split, depth, judged_only=True)
        return
    if base in _SHELLS or base == "eval":
        script = _script_of(base, words, literal)
        if script is None:
            split.commands.append(SimpleCommand(tuple(words), judged_only))  # `bash build.sh`: a program
            return
        if script == "":
            split.trouble(f"{base} runs a script tmg cannot read")
            return
        inner = Split()
        _split_into(script, inner, depth + 1)
        split.commands.extend(SimpleCommand(c.words, judged_only or c.judged_only) for c in inner.commands)
        split.writes.extend(inner.writes)
        if inner.problem:
            split.trouble(inner.problem)
        return
    split.commands.append(SimpleCommand(tuple(words), judged_only))
    if base == "find":
        _find_exec(words, literal, split, depth, judged_only)


def _inner(words: list[str], literal: list[bool], at: int, split: Split, depth: int, judged_only: bool) -> None:
    if not literal[at]:
        split.trouble(f"the command it runs ({words[at]!r}) comes from an expansion")
        return
    _judge_words(words[at:], literal[at:], split, depth, judged_only)


def _after_options(words: list[str], start: int, valued: frozenset[str], assignments: bool) -> int | None:
    """The index of the wrapped command's name (len(words) for none); None for an option not known
    to take no value (it might take the next word, and then the command is elsewhere)."""
    i = start
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1
        if assignments and "=" in word and not word.startswith("-"):
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            return i
        if word in valued:
            i += 2
            continue
        if "=" in word or (len(word) > 2 and not word.startswith("--") and word[:2] in valued):
            i += 1  # --opt=value, -n10
            continue
        if word in ("-i", "-0", "-r", "-t", "-p", "-x", "--null", "--no-run-if-empty", "--ignore-environment",
                    "--verbose", "--interactive", "--open-tty", "--foreground", "--preserve-status", "-v", "-V",
                    "-w", "--wait", "-f", "--fork", "-c", "--ctty", "-l"):
            i += 1
            continue
        return None
    return i


def _first_plain(words: list[str], start: int) -> int | None:
    """sudo-like: the first word not an option; None when an option might take a value."""
    i = start
    while i < len(words):
        word = words[i]
        if word == "--":
            return i + 1
        if not word.startswith("-"):
            return i
        if word in ("-E", "-H", "-n", "-S", "-k", "-K", "-b", "-i", "-s", "-P", "--preserve-env"):
            i += 1
            continue
        return None
    return i


def _script_of(base: str, words: list[str], literal: list[bool]) -> str | None:
    """The script a shell runs from its arguments (`bash -c 'S'`, `eval S`): None when it runs
    a file or reads stdin, "" when the script cannot be known (it comes from an expansion)."""
    if base == "eval":
        if not all(literal[1:]):
            return ""
        return " ".join(words[1:])
    for i in range(1, len(words)):
        word = words[i]
        if word == "--" or not word.startswith("-"):
            return None
        if not word.startswith("--") and "c" in word[1:]:
            if i + 1 >= len(words):
                return ""
            return words[i + 1] if literal[i + 1] else ""
        if word in ("-o", "+o", "-O", "+O"):
            return ""  # takes a value; rare enough to ask
    return None


def _find_exec(words: list[str], literal: list[bool], split: Split, depth: int, judged_only: bool) -> None:
    """`find ... -exec CMD {} ;`: CMD is a command of its own."""
    i = 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            if end == i + 1:
                split.trouble("find -exec names no command")
                return
            _inner(words[: end], literal[: end], i + 1, split, depth, judged_only)
            i = end
        i += 1
