"""Permission rules as users write them: a tool name, optionally with what it acts on.

    shell(git status)     a command prefix: `git status`, `git -C . status -s`, not `git stash`
    shell(rm build)       a destructive program's arguments: exactly `rm build`, nothing more
    shell(chmod +x *)     ...unless it ends with `*`: then any words may follow
    write_file(src/**)    a path glob (relative to the working folder, `~` for home)
    web_fetch(docs.python.org/**)  a URL glob: host[:port]/path, scheme optional
    mcp_github_*          every tool of one MCP server (names are globs)
    read_file             every call of a tool

A rule with a command matches a simple command whose words begin with the rule's words, the
program's global options skipped (tmg.permissions.programs: `git -C . push` is `git push`); a
rule with a path matches an action whose every path it covers; a rule with a URL matches the URLs
its glob covers (a host alone covers every page of it). A bare name matches every call of the
tools it names. Verdicts rank deny > ask > allow.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Decision = Literal["allow", "ask", "deny"]
RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_RULE = re.compile(r"^\s*([A-Za-z0-9_*?\[\]-]+)\s*(?:\((.*)\))?\s*$", re.S)


class RuleError(ValueError):
    pass


@dataclass(frozen=True)
class Rule:
    text: str  # as written, for messages: "shell(git status)"
    decision: Decision
    tool: str  # a glob over tool names
    spec: str | None  # the command prefix or path glob; None: every call
    origin: str = ""  # where it came from: "PERMISSIONS.ALLOW in /x/tmg.yaml", "your decisions (permissions.json)"

    @property
    def words(self) -> tuple[str, ...]:
        return _words(self.spec or "")[0]

    @property
    def open_ended(self) -> bool:
        """Written with a trailing `*`: any words may follow (for a command that would otherwise need all of them)."""
        return _words(self.spec or "")[1]

    def names(self, tool: str) -> bool:
        return _tool_matches(self.tool, tool)


def parse_rule(text: str, decision: Decision, origin: str = "") -> Rule:
    """The rule `text` says; RuleError naming the problem when it says none."""
    match = _RULE.match(text)
    if not match:
        raise RuleError(f"{text!r} is not a rule (write TOOL or TOOL(what), e.g. shell(git status), "
                        "write_file(src/**), mcp_github_*)")
    tool, spec = match.group(1), match.group(2)
    if spec is not None:
        spec = spec.strip()
        if not spec:
            raise RuleError(f"{text!r} has nothing inside its parentheses (write {tool} for every call)")
        try:
            _words(spec)
        except ValueError as exc:
            raise RuleError(f"{text!r}: {exc}") from None
    return Rule(text.strip(), decision, tool, spec, origin)


@lru_cache(maxsize=1024)
def _words(spec: str) -> tuple[tuple[str, ...], bool]:
    words = tuple(shlex.split(spec))
    if words and words[-1] == "*":  # `git status *` means the prefix, as written elsewhere
        return words[:-1], True
    return words, False


@lru_cache(maxsize=1024)
def _tool_matches(pattern: str, tool: str) -> bool:
    return fnmatch.fnmatchcase(tool, pattern)


# Programs that destroy what their arguments name: an allow with arguments means exactly those.
DESTRUCTIVE = frozenset({"rm", "rmdir", "unlink", "mv", "cp", "chmod", "chown", "chgrp", "dd", "truncate", "shred",
                         "ln", "install", "rsync", "srm", "wipe"})


def command_matches(rule: Rule, words: tuple[str, ...], literal: tuple[bool, ...], loose_name: bool) -> bool:
    """`words` begin with the rule's words (read past the program's global options). For deny and
    ask (``loose_name``) `/bin/rm` is `rm` and any reading of an unknown option counts; an allow
    about `ls` never covers `./ls` (a program of the model's), holds only for a certain reading,
    and its words match only words without expansions."""
    from tmg.permissions.programs import readings

    want = rule.words
    if not want or not words:
        return False
    first = words[0]
    if first != want[0] and not (loose_name and "/" in first and first.rsplit("/", 1)[-1] == want[0]):
        return False
    if len(want) == 1:
        return True
    exact = not loose_name and not rule.open_ended and want[0] in DESTRUCTIVE
    if want[1].startswith("-"):  # the rule names global options itself: its words as written
        found = [tuple(range(len(words)))]
    else:
        found, certain = readings(words)
        if not certain and not loose_name:
            return False
    for places in found:
        if len(places) < len(want) or (exact and len(places) != len(want)) or (exact and len(words) != len(want)):
            continue
        if all(_word_is(words, literal, places[k], want[k], k, loose_name) for k in range(1, len(want))):
            return True
    return False


def _word_is(words: tuple[str, ...], literal: tuple[bool, ...], at: int, want: str, k: int, loose: bool) -> bool:
    from tmg.permissions.programs import subcommand_name

    if not (literal[at] if at < len(literal) else True):
        # `rm $f` is not `rm notes.txt`, whatever $f holds; but `git $X` may well be `git push`
        return loose
    if k == 1:
        return subcommand_name(words[0], words[at]) == subcommand_name(words[0], want)
    return words[at] == want


def path_candidates(path: str, cwd: str, home: str) -> tuple[str, ...]:
    """The path as written (made absolute) and as it really is (symlinks resolved): a rule must
    cover both to allow, and either to deny."""
    expanded = home + path[1:] if path == "~" or path.startswith("~/") else path
    plain = os.path.normpath(os.path.join(cwd, expanded))
    real = os.path.realpath(plain)
    return (plain,) if real == plain else (plain, real)


def path_matches(rule: Rule, path: str, cwd: str, home: str) -> bool:
    assert rule.spec is not None
    return _glob(rule.spec, cwd, home).match(path) is not None


@lru_cache(maxsize=1024)
def _glob(spec: str, cwd: str, home: str) -> re.Pattern[str]:
    """`**` any depth, `*` and `?` within one name; relative to `cwd`; a folder covers what is in it."""
    spec = home + spec[1:] if spec == "~" or spec.startswith("~/") else spec
    if not spec.startswith("/"):
        spec = os.path.join(cwd, spec)
    body = _glob_body(spec, "[^/]*").rstrip("/")
    return re.compile(f"{body}(/.*)?" if not body.endswith(".*") else body, re.S)


# -- URLs (web_fetch) ----------------------------------------------------------------------------

_DEFAULT_PORTS = {"http": 80, "https": 443}


def url_target(url: str) -> tuple[str, str] | None:
    """``(scheme, "host[:port]/path[?query]")`` of an http(s) URL as rules see it (the host in
    lower case, a default port left out), or None when it is not one."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:  # an IPv6 literal, as it is written in a URL
        host = f"[{host}]"
    where = host if port in (None, _DEFAULT_PORTS[parts.scheme]) else f"{host}:{port}"
    path = parts.path or "/"
    return parts.scheme, where + path + (f"?{parts.query}" if parts.query else "")


def url_matches(rule: Rule, url: str) -> bool:
    """The rule's URL glob covers ``url``: ``*`` within one part of the path (or the host, or
    the port), ``**`` any depth; a glob with a scheme matches that scheme only."""
    assert rule.spec is not None
    target = url_target(url)
    if target is None:
        return False
    scheme, rest = target
    spec = rule.spec
    if "://" in spec:
        want, _, spec = spec.partition("://")
        if want.lower() != scheme:
            return False
    return _url_glob(spec).match(rest) is not None


@lru_cache(maxsize=256)
def _glob_body(spec: str, star: str) -> str:
    """A glob as a regex body: `**` any depth, `star` for `*`, `?` one character of a name."""
    out, i = [], 0
    while i < len(spec):
        if spec.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            out.append(star if spec[i] == "*" else "[^/]" if spec[i] == "?" else re.escape(spec[i]))
            i += 1
    return "".join(out)


def _url_glob(spec: str) -> re.Pattern[str]:
    host, slash, path = spec.partition("/")
    host_re = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in host.lower())
    if not slash:  # a host alone: every page of it
        return re.compile(f"{host_re}(/.*)?", re.S)
    body = _glob_body(path, "[^/?]*")  # a URL's `*` stops at its query too
    # A page's query string belongs to it: `docs.x/page` covers `docs.x/page?lang=en`.
    return re.compile(f"{host_re}/{body}" + ("" if body.endswith(".*") else r"(\?.*)?"), re.S)
