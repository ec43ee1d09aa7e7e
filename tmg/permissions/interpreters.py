"""Programs whose arguments are code: what they would run, as far as it can be read.

`python -c CODE`, `node -e CODE`, `perl -e`, an awk program that calls system(), a sed script with
its `e` command, `find -delete`, tar's `--to-command`, rsync's `-e`, `git -c alias.x='!cmd'`,
`make CC=...`: each is `hidden` (it may do more than its words show: only a rule naming the whole
command allows it, never "always" a bare one), with the `code` it runs (a denied word in it
denies), the shell lines it runs (parsed and judged like the line) and the commands it runs
(`find -exec`, `python -m pip`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tmg.permissions.sed import SedScript, read_sed

Argv = tuple[tuple[str, ...], tuple[bool, ...], bool]  # words, which are literal, judged only (no allow of its own)


@dataclass(frozen=True)
class Inside:
    hidden: str | None = None
    code: str = ""
    scripts: tuple[str, ...] = ()
    inner: tuple[Argv, ...] = ()
    stdin: bool = False  # it runs what it reads on its input as code (`curl x | sh`, `python <<EOF`)


NOTHING = Inside()
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")
# inline-code options per interpreter (`perl -ne` counts: a cluster ending in the letter)
_INLINE: dict[str, frozenset[str]] = {
    "node": frozenset({"-e", "--eval", "-p", "--print"}), "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}), "deno": frozenset({"eval"}),
    "perl": frozenset({"-e", "-E"}), "ruby": frozenset({"-e"}), "php": frozenset({"-r", "-B", "-R", "-E"}),
    "lua": frozenset({"-e"}), "luajit": frozenset({"-e"}), "Rscript": frozenset({"-e"}), "R": frozenset({"-e"}),
    "julia": frozenset({"-e", "-E", "--eval", "--print"}), "osascript": frozenset({"-e"}),
    "pwsh": frozenset({"-c", "-Command", "-command", "-EncodedCommand", "-ec"}),
    "powershell": frozenset({"-c", "-Command", "-command", "-EncodedCommand", "-ec"}),
    "guile": frozenset({"-c"}), "expect": frozenset({"-c"}), "gdb": frozenset({"-ex", "--eval-command", "-iex",
                                                                               "-x", "--command"}),
    "psql": frozenset({"-c", "--command"}), "mysql": frozenset({"-e", "--execute"}), "tclsh": frozenset(),
    "sqlite3": frozenset({"-cmd"}),
}
_CLUSTERED = {"perl", "ruby"}  # `-ne`, `-lpe`: the last letter takes the code
_AWKS = {"awk", "gawk", "mawk", "nawk"}
_SEDS = {"sed", "gsed"}
# git configuration keys whose value is a command git runs
_GIT_COMMAND_KEYS = re.compile(r"^(core\.(pager|editor|sshcommand|fsmonitor|gitproxy|askpass)|sequence\.editor|"
                               r"diff\.external|gpg(\.\w+)?\.program|credential(\..*)?\.helper|pager\..*|"
                               r"uploadpack\.packobjectshook|interactive\.difffilter|merge\..*\.driver|"
                               r"diff\..*\.(textconv|command)|filter\..*\.(clean|smudge|process)|"
                               r"mergetool\..*\.cmd|difftool\..*\.cmd|alias\..*)$", re.I)


def inspect(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    """What `words` runs beyond itself (NOTHING for most programs)."""
    name = words[0].rsplit("/", 1)[-1]
    if _PYTHON.match(name):
        return _python(words, literal)
    if name in _INLINE:
        return _inline(name, words, literal)
    if name in _AWKS:
        return _awk(words, literal)
    if name in _SEDS:
        return _sed(words, literal)
    special = _SPECIAL.get(name)
    return special(words, literal) if special is not None else NOTHING


def _python(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("-W", "-X", "--check-hash-based-pycs"):
            i += 2
            continue
        if word.startswith("-") and word != "-" and not word.startswith("--") and "c" in word[1:]:
            return _code(f"{words[0]} -c", words, literal, i + 1)
        if word.startswith("-m") and word != "-":
            module = word[2:] or (words[i + 1] if i + 1 < len(words) else "")
            at = i + 1 if word[2:] else i + 2
            return Inside(inner=(((module,) + words[at:], (True,) + literal[at:], True),)) if module else NOTHING
        if not word.startswith("-") or word == "-":
            return Inside(stdin=word == "-")
        i += 1
    return Inside(stdin=True)


def _inline(name: str, words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    options = _INLINE[name]
    if name == "sqlite3":
        positional = [i for i, w in enumerate(words) if i and not w.startswith("-")]
        if len(positional) > 1:  # after the database: SQL, and dot-commands such as .shell
            return _code("sqlite3 with statements", words, literal, positional[1], joined=True)
    for i, word in enumerate(words[1:], 1):
        if word in options or (name in _CLUSTERED and word.startswith("-") and not word.startswith("--")
                               and word[-1:] in "eE" and len(word) > 2):
            return _code(f"{name} {word}", words, literal, i + 1)
        if word.startswith("--eval=") or word.startswith("--print="):
            return Inside(hidden=f"{name} {word.split('=')[0]} runs a program", code=word.split("=", 1)[1])
    if name in ("gdb", "psql", "mysql", "tclsh", "expect", "osascript", "deno"):
        return NOTHING
    return Inside(stdin=len(words) == 1 or words[1:] == ("-",))


def _code(what: str, words: tuple[str, ...], literal: tuple[bool, ...], at: int, joined: bool = False) -> Inside:
    if at >= len(words):
        return Inside(hidden=f"{what} runs a program")
    if not all(literal[at:] if joined else literal[at:at + 1]):
        return Inside(hidden=f"{what} runs a program built from expansions", code=" ".join(words[at:]))
    return Inside(hidden=f"{what} runs a program", code=" ".join(words[at:]) if joined else words[at])


def _awk(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    """The program runs commands when it calls system(), pipes, reads a command's output or prints to a file."""
    i, program = 1, None
    while i < len(words):
        word = words[i]
        if word in ("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"):
            return Inside(hidden=f"{words[0]} {word} runs a program from a file")
        if word in ("-F", "-v", "--assign", "--field-separator"):
            i += 2
            continue
        if word in ("-e", "--source"):
            program = words[i + 1] if i + 1 < len(words) else ""
            break
        if word == "--" or not word.startswith("-"):
            program = words[i + 1] if word == "--" and i + 1 < len(words) else word
            break
        i += 1
    if program is None:
        return NOTHING
    if not literal[min(i + (1 if words[i] in ("-e", "--source", "--") else 0), len(words) - 1)]:
        return Inside(hidden="its awk program is built from expansions", code=program)
    if re.search(r"system\s*\(|\|&?|getline|>", program):
        strings = tuple(m.group(1) for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', program))
        return Inside(hidden="its awk program runs commands or writes files", code=program, scripts=strings)
    return NOTHING


def _sed(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    scripts = sed_scripts(words, literal)
    if scripts is None:
        return Inside(hidden="its sed script is built from expansions or read from a file")
    read = read_sed("\n".join(scripts)) if scripts else SedScript()
    if read is None:
        return Inside(hidden="its sed script is not one tmg can read", code="\n".join(scripts))
    if read.runs or read.executes:
        why = "its sed script runs a command" + (" (the s///e flag runs the text it makes)" if read.executes else "")
        return Inside(hidden=why, code="\n".join(scripts), scripts=read.runs)
    return NOTHING


def sed_scripts(words: tuple[str, ...], literal: tuple[bool, ...]) -> list[str] | None:
    """The scripts of a sed command line (-e, --expression, else its first operand); None when
    one comes from an expansion or a file."""
    scripts: list[str] = []
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("-e", "--expression"):
            if i + 1 >= len(words) or not literal[i + 1]:
                return None
            scripts.append(words[i + 1])
            i += 1
        elif word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif word in ("-f", "--file") or word.startswith("--file="):
            return None
        elif word in ("-l", "--line-length"):
            i += 1
        elif (word == "--" or not word.startswith("-")) and not scripts:
            if not literal[i]:
                return None
            scripts.append(words[i + 1] if word == "--" and i + 1 < len(words) else word)
            if word == "--":
                i += 1
        i += 1
    return scripts


def sed_in_place(words: tuple[str, ...]) -> bool:
    return any(w.startswith("--in-place") or (w.startswith("-") and not w.startswith("--") and "i" in w[1:])
               for w in words[1:])


def _find(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    """`-exec CMD {} ;` runs CMD; `-delete` removes what it finds (a deny of rm holds)."""
    inner: list[Argv] = []
    hidden = None
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            if end == i + 1:
                return Inside(hidden="find -exec names no command")
            inner.append((words[i + 1:end], literal[i + 1:end], False))
            i = end
        elif word == "-delete":
            hidden = "find -delete removes every file it finds"
            inner.append((("rm", "--", "{}"), (True, True, True), True))
        i += 1
    return Inside(hidden=hidden, inner=tuple(inner))


_TAR_COMMANDS = ("--to-command", "--checkpoint-action", "--use-compress-program", "--rsh-command", "--info-script",
                 "--new-volume-script", "--rmt-command", "-I", "-F")


def _tar(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    scripts = []
    for i, word in enumerate(words[1:], 1):
        option, eq, value = word.partition("=")
        if option not in _TAR_COMMANDS:
            continue
        if not eq:
            value = words[i + 1] if i + 1 < len(words) else ""
        if option == "--checkpoint-action":
            if not value.startswith("exec="):
                continue  # echo, dot, bell, ...: tar's own actions
            value = value[len("exec="):]
        scripts.append(value)
    if not scripts:
        return NOTHING
    return Inside(hidden="tar runs the command given to one of its options", code=" ".join(scripts),
                  scripts=tuple(s for s in scripts if s))


def _rsync(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    scripts = []
    for i, word in enumerate(words[1:], 1):
        option, _, value = word.partition("=")
        takes = option in ("-e", "--rsh", "--rsync-path") or (
            not word.startswith("--") and word.startswith("-") and word.endswith("e") and len(word) > 2)
        if takes:
            scripts.append(value or (words[i + 1] if i + 1 < len(words) else ""))
    if not scripts:
        return NOTHING
    return Inside(hidden="rsync runs the remote shell command it is given", code=" ".join(scripts),
                  scripts=tuple(s for s in scripts if s))


def _git(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    """`-c key=value` naming a command (an alias starting with `!`, core.pager, ...) runs it; an alias
    without `!` is another subcommand (a deny of that one holds); `rebase --exec CMD` and friends."""
    from tmg.permissions.programs import subcommand_at

    places, _ = subcommand_at(words)
    scripts: list[str] = []
    inner: list[Argv] = []
    start = min(places) if places else len(words)
    for i in range(1, start):
        word = words[i]
        setting = words[i + 1] if word == "-c" and i + 1 < len(words) else word[2:] if word.startswith("-c") else ""
        key, _, value = setting.partition("=")
        if not key or not _GIT_COMMAND_KEYS.match(key):
            continue
        if value.startswith("!") or not key.lower().startswith("alias."):
            scripts.append(value.lstrip("!"))
        elif places and words[start] == key.split(".", 1)[1]:
            inner.append(((words[0], *value.split()) + words[start + 1:], (True,) * (len(value.split()) + 1)
                          + literal[start + 1:], True))
    for at in places:
        rest = words[at + 1:]
        for j, word in enumerate(rest):
            option, _, value = word.partition("=")
            if option in ("--exec", "-x", "--extcmd", "--upload-pack", "-u", "--receive-pack"):
                scripts.append(value or (rest[j + 1] if j + 1 < len(rest) else ""))
        if words[at] == "bisect" and rest[:1] == ("run",) and len(rest) > 1:
            inner.append((rest[1:], literal[at + 2:], True))
        if words[at] == "submodule" and rest[:1] == ("foreach",):
            scripts.append(" ".join(w for w in rest[1:] if not w.startswith("--")))
        if words[at] == "config":  # `git config alias.x '!rm x'`: what the setting will run
            values = [w for w in rest if not w.startswith("-")]
            if len(values) >= 2 and _GIT_COMMAND_KEYS.match(values[0]):
                scripts.append(values[1].lstrip("!"))
    if not scripts and not inner:
        return NOTHING
    return Inside(code=" ".join(scripts), scripts=tuple(s for s in scripts if s), inner=tuple(inner))


def _make(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    settings = [w.split("=", 1)[1] for w in words[1:] if "=" in w and not w.startswith("-")]
    if not settings:
        return NOTHING
    return Inside(hidden="make NAME=value can change the commands its recipes run", code=" ".join(settings),
                  scripts=tuple(settings))


def _go(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    scripts = []
    for i, word in enumerate(words):
        option, _, value = word.partition("=")
        if option in ("-exec", "-toolexec", "-vettool"):
            scripts.append(value or (words[i + 1] if i + 1 < len(words) else ""))
    return Inside(code=" ".join(scripts), scripts=tuple(s for s in scripts if s)) if scripts else NOTHING


def _ssh(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    scripts = []
    for i, word in enumerate(words):
        setting = words[i + 1] if word == "-o" and i + 1 < len(words) else word[2:] if word.startswith("-o") else ""
        key, _, value = setting.replace(" ", "=", 1).partition("=")
        if key.lower() in ("proxycommand", "localcommand", "knownhostscommand", "remotecommand"):
            scripts.append(value)
    if not scripts:
        return NOTHING
    return Inside(hidden="ssh -o names a command it runs here", code=" ".join(scripts), scripts=tuple(scripts))


def _trap(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    """`trap 'rm x' EXIT`: the handler is a shell line it runs later."""
    if len(words) < 3 or words[1] in ("-l", "-p"):
        return NOTHING
    at = 2 if words[1] == "--" else 1
    if not literal[at]:
        return Inside(hidden="trap sets a handler built from expansions")
    return Inside(scripts=(words[at],))


def _alias(words: tuple[str, ...], literal: tuple[bool, ...]) -> Inside:
    """`alias ls='rm -rf'`: what the name will run."""
    bodies = [w.split("=", 1)[1] for w, lit in zip(words[1:], literal[1:]) if "=" in w and lit]
    if len(bodies) < sum(1 for w in words[1:] if "=" in w):
        return Inside(hidden="alias defines a command built from expansions")
    return Inside(scripts=tuple(bodies)) if bodies else NOTHING


_SPECIAL = {"trap": _trap, "alias": _alias, "find": _find, "tar": _tar, "gtar": _tar, "bsdtar": _tar,
            "rsync": _rsync, "git": _git, "make": _make, "gmake": _make, "go": _go, "ssh": _ssh}
