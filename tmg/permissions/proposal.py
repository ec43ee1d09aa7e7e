"""What "yes, always" (or "yes for this session") saves: the narrowest rule that covers what the
user saw, shown in the question before it is saved.

A command's rule is its program, subcommand and the arguments as written, up to the first word
that comes from an expansion (`git commit -m "$msg"` saves `shell(git commit -m)`). A destructive
program (rm, mv, chmod, ...) is saved with exactly its arguments, and only when each path it
names is inside the working folder. Never saved: a bare interpreter, executor, shell, wrapper,
destructive program or a program with subcommands (`shell(python)`, `shell(make)`, `shell(rm)`,
`shell(git)`), a command that may run more than its words show unless all its words are named, a
rule that would cover something a deny forbids, and anything about tmg's control files.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

from tmg.permissions.action import ToolAction
from tmg.permissions.lines import CommandPart
from tmg.permissions.places import Places
from tmg.permissions.rules import DESTRUCTIVE, Rule

_NEVER_BARE = frozenset({
    "python", "python3", "python2", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua",
    "luajit", "Rscript", "R", "julia", "osascript", "pwsh", "powershell", "guile", "tclsh", "expect", "gdb", "awk",
    "gawk", "mawk", "nawk", "sed", "gsed", "find", "xargs", "make", "gmake", "just", "ninja", "parallel", "watch",
    "env", "sudo", "doas", "su", "runuser", "pkexec", "ssh", "npx", "bunx", "pnpx", "uvx", "pipx", "eval", "exec",
    "source", ".", "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "toybox", "tar", "rsync",
    "nohup", "nice", "timeout", "flock", "chroot", "unshare", "nsenter", "script", "strace", "ltrace", "stdbuf",
    "ionice", "setsid", "taskset", "chrt", "systemd-run", "sqlite3", "psql", "mysql", "curl", "wget", "dd",
    "kill", "pkill", "killall", "docker", "podman", "kubectl", "helm", "terraform"})


@dataclass(frozen=True)
class FetchTarget:
    url: str  # a URL to fetch that needs an allow (web_fetch)


@dataclass(frozen=True)
class Proposal:
    rules: tuple[str, ...] = ()  # what "always" saves (none: it is not offered)
    why_not: str = ""  # when none: why, for the question


def propose(action: ToolAction, needing: list, places: Places, denies: list[Rule]) -> Proposal:
    """The rules for the parts of `action` that need an allow, or why "always" is not offered."""
    out: list[str] = []
    for part in needing:
        if isinstance(part, CommandPart):
            rule, why = _command_rule(action.tool, part, places)
        elif isinstance(part, str):
            rule, why = _path_rule(action, part), ""
        elif isinstance(part, FetchTarget):
            rule, why = _url_rule(action.tool, part.url), ""
        else:
            rule, why = action.tool, ""
        if rule is None:
            return Proposal(why_not=why)
        if any(_covers_deny(rule, deny) for deny in denies):
            return Proposal(why_not=f"{rule} would also cover what your deny rule {_name(denies, rule)} forbids")
        if rule not in out:
            out.append(rule)
    return Proposal(tuple(out))


def _command_rule(tool: str, part: CommandPart, places: Places) -> tuple[str | None, str]:
    command = part.command
    words, literal = command.words, command.literal
    name = words[0].rsplit("/", 1)[-1]
    cut = next((i for i, lit in enumerate(literal) if not lit), len(words))
    if command.hidden or part.secret:
        if cut < len(words):
            return None, f"`{command.text}` has a word that comes from an expansion"
        return f"{tool}({shlex.join(words)})", ""
    if name in DESTRUCTIVE and "/" not in words[0]:
        if cut < len(words) or len(words) == 1:
            return None, f"{name} is saved only with the exact paths it changes"
        outside = next((w for w in words[1:] if not w.startswith("-") and not places.inside(w, command.bases)), None)
        if outside is not None:
            return None, f"{outside} is outside the working folder"
        return f"{tool}({shlex.join(words)})", ""
    kept = words[:cut]
    if len(kept) == 1 and never_whole(name):
        return None, f"{name} is never allowed whole by an answer (add a rule to your config if you mean it)"
    return f"{tool}({shlex.join(kept)})", ""


def never_whole(program: str) -> bool:
    """An interpreter, executor, wrapper, destructive program or one with subcommands: an
    answer never allows it with any arguments at all."""
    name = program.rsplit("/", 1)[-1]
    return (name in _NEVER_BARE or name in DESTRUCTIVE or _has_subcommands(name)
            or re.match(r"^(python|pypy)[0-9.]*$", name) is not None)


def _has_subcommands(name: str) -> bool:
    from tmg.permissions.programs import grammar_of

    return grammar_of(name) is not None


def _path_rule(action: ToolAction, path: str) -> str:
    if action.sensitive or action.effect == "read":
        return f"{action.tool}({path})"
    return f"{action.tool}({os.path.dirname(path)}/**)"


def _url_rule(tool: str, url: str) -> str:
    from tmg.permissions.rules import url_target

    found = url_target(url)
    return f"{tool}({found[1].partition('/')[0] if found else url}/**)"  # the host, every page of it


def _covers_deny(text: str, deny: Rule) -> bool:
    """The allow `text` would cover commands (or a host's pages) the deny rule is about."""
    from tmg.permissions.rules import parse_rule

    allow = parse_rule(text, "allow")
    if deny.spec is None or allow.spec is None or not deny.names(allow.tool):
        return False
    if allow.spec.endswith("/**") and "(" not in allow.spec:  # a URL's host: a deny of any page of it
        host = deny.spec.partition("://")[2] or deny.spec
        return host.partition("/")[0].lower() == allow.spec[:-3]
    return len(allow.words) <= len(deny.words) and deny.words[:len(allow.words)] == allow.words


def _name(denies: list[Rule], text: str) -> str:
    return next((d.text for d in denies if _covers_deny(text, d)), "")
