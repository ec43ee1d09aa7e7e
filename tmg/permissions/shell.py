"""A shell command line split into the simple commands it would run (tmg.permissions.commands).

`git status && rm -rf y` is two commands, and each must be allowed for the line to be. The line
is parsed by bashlex (a port of bash's own grammar), never split by hand: pipes, `&&`, `;`,
subshells, command and process substitution, functions and loops all come apart into the
simple commands inside them. Commands that run other commands are looked through: wrappers
(`env`, `nice`, `sudo`, `flock`, ...: tmg.permissions.wrappers), shells' scripts (`bash -c`,
`eval`, a here-document piped into `sh`), and interpreters' code (`python -c`, awk's system(),
sed's `e`, `find -exec`: tmg.permissions.interpreters). Whatever cannot be read with certainty
(syntax bashlex does not know, a command name that comes from a variable, `PATH=` in front of a
command) is a `problem`: the engine then asks, whatever the rules allow (it still denies what a
rule denies).
"""

from __future__ import annotations

import re
from functools import lru_cache

from tmg.permissions.commands import SimpleCommand, Split
from tmg.permissions.plain import plain_commands
from tmg.permissions.quoting import is_literal, substitutions, unquoted, unquoted_text

MAX_DEPTH = 4  # bash -c 'bash -c "..."' nesting looked into; deeper is a problem

_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "hush", "yash", "posh", "rbash", "tcsh", "csh"}
# Assignments in front of a command that change which program runs, what it loads or what it
# runs for you (pagers, editors, git's and npm's settings from the environment).
_HIJACKING = {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV", "IFS", "PYTHONPATH",
              "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
              "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "LESSOPEN",
              "LESSCLOSE", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS", "KUBECONFIG", "DOCKER_CONFIG", "RUSTC_WRAPPER",
              "MAKEFLAGS", "MAKEFILES", "SHELL", "CC", "CXX", "LD"}
_HIJACKING_PREFIXES = ("GIT_", "npm_config_", "NPM_CONFIG_", "CARGO_", "YARN_", "PIP_", "UV_", "BASH_FUNC_")
_ARGUMENTS = re.compile(r"\$[0-9@*]|\$\{[0-9@*]|\{\}")  # a script's own arguments, or xargs' `{}`
_TIMED = re.compile(r"^\s*time(\s+-p)?\s+")
_HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}
_OUTPUT_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}
_EXPANSION_MARKS = ("$(", "`", "<(", ">(")


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
    timed = _TIMED.match(line)
    if timed:  # bash's `time` keyword (bashlex does not read it) only times what follows
        line = line[timed.end():]
    plain = plain_commands(line)
    if plain is not None:  # words and list operators only: no parser needed
        for words, literal, piped in plain:
            _judge_words(words, literal, split, depth, False, (line, False) if piped else None)
        return
    import bashlex  # only a shell command pays for the parser

    try:
        trees = bashlex.parse(line)
    except Exception as exc:  # noqa: BLE001 - bashlex raises several types for what it cannot read
        split.trouble(f"it does not parse cleanly ({type(exc).__name__}: {exc})")
        return
    for tree in trees:
        _walk(tree, line, split, depth, piped=False)


def _script(script: str, split: Split, depth: int, judged_only: bool) -> None:
    """A shell line a command runs (`bash -c S`, `su -c S`, sed's `e S`), judged like the line."""
    inner = Split(bases=list(split.bases))
    _split_into(script, inner, depth + 1)
    for c in inner.commands:
        split.commands.append(SimpleCommand(c.words, c.literal, judged_only or c.judged_only, c.hidden, c.code,
                                            c.unread, c.bases))
    split.writes.extend(inner.writes)
    split.write_bases.extend(inner.write_bases)
    split.reads.extend(inner.reads)
    split.mentions.extend(inner.mentions)
    if inner.problem:
        split.trouble(inner.problem)


def _walk(node, line: str, split: Split, depth: int, piped: bool) -> None:
    kind = node.kind
    if kind == "command":
        _command(node, line, split, depth, piped)
        return
    if kind == "pipeline":
        commands = [p for p in node.parts if p.kind != "pipe"]
        for i, part in enumerate(commands):
            _walk(part, line, split, depth, piped or i > 0)
        return
    if kind in ("commandsubstitution", "processsubstitution"):
        _walk(node.command, line, split, depth, False)
        return
    if kind == "parameter":
        if any(mark in node.value for mark in _EXPANSION_MARKS):  # `${X:-$(rm y)}`: bashlex leaves it unread
            split.trouble("it has a command inside a parameter expansion")
            inner = re.search(r"\$\((.*)\)|`(.*)`", node.value, re.S)
            if inner:  # what it would run still counts for deny and ask
                _script(inner.group(1) or inner.group(2) or "", split, depth, True)
        return
    if kind == "heredoc":
        if any(mark in node.value for mark in ("$(", "`")):
            split.trouble("it has a command inside a here-document")
        return
    if kind == "redirect":
        _redirect(node, line, split, depth)
        return
    if kind == "word":  # a word outside a command: a loop's list, a case's subject
        split.mentions.append(node.word)
    for child in _children(node):
        _walk(child, line, split, depth, piped)


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
        _walk(heredoc, line, split, depth, False)
    if target is None or not hasattr(target, "kind"):
        return  # `2>&1`: a descriptor, not a file
    for child in getattr(target, "parts", None) or []:
        _walk(child, line, split, depth, False)  # `> $(rm z)` runs rm
    if node.type in _OUTPUT_REDIRECTS and target.word not in _HARMLESS_TARGETS:
        split.writes.append(target.word)
        split.write_bases.append(tuple(split.bases))
    elif node.type in ("<", "<>") and heredoc is None:
        split.reads.append(target.word)


def _command(node, line: str, split: Split, depth: int, piped: bool) -> None:
    words: list = []
    stdin: str | None = None  # what a here-document or here-string feeds it
    for part in node.parts:
        if part.kind == "assignment":
            name, _, value = part.word.partition("=")
            if not words and (name in _HIJACKING or name.startswith(_HIJACKING_PREFIXES)):
                split.trouble(f"it sets {name}, which changes what the command runs")
                if is_literal(part, line):  # GIT_SSH_COMMAND='rm x': what it names still counts for deny and ask
                    _script(unquoted_text(value) or value, split, depth, True)
            split.mentions.append(value)
            if is_literal(part, line):
                split.assigned.setdefault(name, []).append(unquoted_text(value) or value)
            _walk_inside(part, line, split, depth)
        elif part.kind == "word":
            words.append(part)
            _walk_inside(part, line, split, depth)
            _unread_substitutions(part, line, split, depth)
        else:  # redirections
            if part.kind == "redirect" and getattr(part, "heredoc", None) is not None:
                stdin = part.heredoc.value.rsplit("\n", 1)[0]
            elif part.kind == "redirect" and part.type == "<<<" and is_literal(part.output, line):
                stdin = unquoted(part.output, line)
            _walk(part, line, split, depth, False)
    if not words:
        return  # `x=1`: assignments only
    if not is_literal(words[0], line):
        split.trouble(f"its command name {words[0].word!r} comes from an expansion")
        _guess_name(words, line, split, depth)
        return
    texts = []
    for word in words:
        text = unquoted(word, line) if is_literal(word, line) else word.word
        if text is None:
            split.trouble(f"its word {line[word.pos[0]:word.pos[1]]!r} is quoted in a way tmg cannot read")
            return
        texts.append(text)
    fed = (stdin, True) if stdin is not None else (line, False) if piped else None
    _judge_words(tuple(texts), tuple(is_literal(w, line) for w in words), split, depth, False, fed)


def _guess_name(words: list, line: str, split: Split, depth: int) -> None:
    """A command name from an expansion: what the line assigned it, or its literal start
    (`rm${IFS}x`), still counts for deny and ask (the line asks anyway)."""
    text = words[0].word
    named = re.fullmatch(r"\$\{?(\w+)\}?", text)
    guesses = list(split.assigned.get(named.group(1), [])) if named else []
    if text.split("$", 1)[0]:
        guesses.append(text.split("$", 1)[0])
    rest = tuple(unquoted(w, line) or w.word if is_literal(w, line) else w.word for w in words[1:])
    rest_literal = tuple(is_literal(w, line) for w in words[1:])
    for guess in guesses:
        named_words = tuple(guess.split())
        if named_words:
            _judge_words(named_words + rest, (True,) * len(named_words) + rest_literal, split, depth, True, None)


def _unread_substitutions(word, line: str, split: Split, depth: int) -> None:
    """A `$(...)` bashlex did not see (`~$(cmd)`, `''$(cmd)''`): the line asks, and what it would
    run still counts for deny and ask."""
    if is_literal(word, line) or any(p.kind in ("commandsubstitution", "processsubstitution")
                                     for p in getattr(word, "parts", None) or ()):
        return
    raw = line[word.pos[0]:word.pos[1]]
    found = substitutions(raw)
    if found:
        split.trouble(f"its word {raw!r} runs a command the parser did not read")
        for inner in found:
            _script(inner, split, depth, True)


def _walk_inside(word, line: str, split: Split, depth: int) -> None:
    for child in getattr(word, "parts", None) or []:
        _walk(child, line, split, depth, False)


def _judge_words(words: tuple[str, ...], literal: tuple[bool, ...], split: Split, depth: int,
                 judged_only: bool, fed: tuple[str, bool] | None) -> None:
    """Add the command `words` runs, looking through what runs other commands. `fed`: the text
    on its input, and whether that text is itself the script (a here-document), or only the
    line it comes from (a pipe)."""
    from tmg.permissions.interpreters import inspect
    from tmg.permissions.programs import known, runs_arguments, runs_hidden_code
    from tmg.permissions.wrappers import look_through

    if not words:
        return
    if not literal[0]:
        split.trouble(f"the command it runs ({words[0]!r}) comes from an expansion")
        return
    base = words[0].rsplit("/", 1)[-1]
    through = look_through(words, literal)
    if through is not None:
        if through.problem or through.elsewhere or (through.argv is None and not through.scripts):
            # sudo needs its own rule; a wrapper alone (`env`) is a command; one tmg cannot read is looked into
            split.add(words, literal, judged_only, unread=through.problem is not None)
        if through.problem:
            split.trouble(through.problem)
            return
        for name in through.sets:
            if name in _HIJACKING or name.startswith(_HIJACKING_PREFIXES):
                split.trouble(f"it sets {name}, which changes what the command runs")
        inner_only = judged_only or through.elsewhere
        for script in through.scripts:
            _script(script, split, depth, inner_only)
        if through.argv is not None:
            if through.chdir is not None:
                split.bases.append(through.chdir)
            _judge_words(*through.argv, split, depth, inner_only, fed)
        return
    if base in _SHELLS or base == "eval":
        _shell(base, words, literal, split, depth, judged_only, fed)
        return
    inside = inspect(words, literal)
    hidden = inside.hidden or runs_hidden_code(words)
    code = inside.code or (" ".join(words[1:]) if hidden else "")  # what a deny looks for in it
    if inside.stdin and fed is not None:
        hidden, code = f"{base} runs the program it reads from its input", fed[0]
    elif hidden and fed is not None:  # `echo rm x | awk '{system($0)}'`: its code may run what it reads
        code = f"{code}\n{fed[0]}"
    if base in ("source", ".") and len(words) > 1 and not literal[1]:  # `. <(curl x)`
        hidden, code = f"{base} runs a script another command makes", fed[0] if fed else " ".join(words)
    unread = not known(base) or runs_arguments(words)
    split.add(words, literal, judged_only, hidden=hidden, code=code, unread=unread)
    if unread:  # a program tmg does not know: a word of it that reads as a command line counts for deny and ask
        _words_as_lines(words, literal, split, depth)
    for script in inside.scripts:
        _script(script, split, depth, True)
    for inner_words, inner_literal, only in inside.inner:
        _judge_words(inner_words, inner_literal, split, depth, judged_only or only, None)
    if base in ("export", "declare", "local", "readonly", "typeset"):
        for word, lit in zip(words[1:], literal[1:]):
            if lit and "=" in word:
                split.assigned.setdefault(word.split("=", 1)[0], []).append(word.split("=", 1)[1])
    if base in ("cd", "pushd"):
        split.bases.append((words[1] if literal[1] else None) if len(words) > 1 else "~")
    elif base == "popd":
        split.bases.append(None)


def _words_as_lines(words: tuple[str, ...], literal: tuple[bool, ...], split: Split, depth: int) -> None:
    for word, lit in zip(words[1:], literal[1:]):
        if lit and any(c in word for c in " ;|&") and depth < MAX_DEPTH:
            inner = Split(bases=list(split.bases))
            _split_into(word, inner, depth + 1)  # what does not parse is only text
            for c in inner.commands:
                split.commands.append(SimpleCommand(c.words, c.literal, True, c.hidden, c.code, c.unread, c.bases))


def _shell(base: str, words: tuple[str, ...], literal: tuple[bool, ...], split: Split, depth: int,
           judged_only: bool, fed: tuple[str, bool] | None) -> None:
    script = _script_of(base, words, literal)
    line = fed[0] if fed is not None else " ".join(words)
    if script == "":  # `eval "$(...)"`, `bash -c "$S"`: made when it runs; a denied word anywhere still counts
        split.trouble(f"{base} runs a script tmg cannot read")
        split.add(words, literal, judged_only, hidden=f"{base} runs a script tmg cannot read", code=line)
    elif script is not None:
        if fed is not None and not fed[1] and _ARGUMENTS.search(script):  # `... | xargs sh -c '$0'`
            split.add(words, literal, judged_only, hidden=f"{base} runs words it is given from its input", code=line)
        _script(script, split, depth, judged_only)
    elif len(words) > 1 and not words[1].startswith("-"):
        if not literal[1]:  # `bash <(curl x)`: the script is what another command prints
            split.add(words, literal, judged_only, hidden=f"{base} runs a script another command makes", code=line)
        else:
            split.add(words, literal, judged_only)  # `bash build.sh`: a program of its own
    elif fed is not None:
        # `curl x | sh`, `sh <<EOF`: it runs what it reads; a here-document is read like a -c script
        text, is_script = fed
        split.add(words, literal, judged_only, hidden=f"{base} runs the commands it reads from its input", code=text)
        if is_script:
            _script(text, split, depth, True)
    else:
        split.add(words, literal, judged_only)  # stdin is empty: it runs nothing


def _script_of(base: str, words: tuple[str, ...], literal: tuple[bool, ...]) -> str | None:
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
