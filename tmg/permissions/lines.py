"""A shell line read against the rules: each command in it with the rule that decides it, whether
it only reads, and the secret and control files the line names.

A deny or ask rule about a command holds wherever that command stands: through wrappers and
shells (tmg.permissions.shell), after the global options of its program (tmg.permissions.rules),
after any word of a program tmg does not know (`mywrap rm -rf x`: it might be a wrapper), and in
code the line runs (`python -c 'os.system("rm x")'`). An allow is strict: the rule must cover the
command by its words, and a command that may do more than its words show (`git -c alias...`,
`python -c`), or that names a file holding secrets, needs a rule naming all of its words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from tmg.permissions.places import Places, names_in
from tmg.permissions.rules import RANK, Rule, command_matches
from tmg.permissions.commands import SimpleCommand
from tmg.permissions.shell import split_command


@dataclass
class CommandPart:
    command: SimpleCommand
    rule: Rule | None = None  # the deny, ask or covering allow that decides it
    missed: Rule | None = None  # an allow that matched without covering it (for the reason said)
    secret: str | None = None  # "path: why" when it names a file that holds secrets
    control: str | None = None  # "path: why" when it may change one of tmg's control files
    looks: bool = False  # it only reads, inside the working folder


@dataclass
class LineReading:
    parts: list[CommandPart] = field(default_factory=list)
    problem: str | None = None  # why the line cannot be judged part by part
    secret: str | None = None  # the first secret file the line names (a part's, or a redirection's)
    control: str | None = None  # the first control file a redirection writes
    looks_only: bool = False  # every part only reads: it runs without a question in every mode


def read_line(line: str, rules: RuleIndex, places: Places) -> LineReading:
    from tmg.permissions.readonly import NOT_FILES, looks_only

    split = split_command(line)
    places = places.fresh()
    reading = LineReading(problem=split.problem)
    if split.writes and reading.problem is None:
        reading.problem = f"it writes to {', '.join(split.writes)} by redirection"
    for command in split.commands:
        part = CommandPart(command)
        names = _names(command, places.home)
        name = command.words[0].rsplit("/", 1)[-1]
        if name not in NOT_FILES or command.code:
            part.secret = next((s for n in names if (s := places.secret(n, command.bases))), None)
        part.rule, part.missed = rules.decide(part)
        reads = all(command.literal) and not command.hidden and looks_only(command.words)
        part.looks = reads and part.secret is None and (
            name in NOT_FILES or all(places.inside(n, command.bases) for n in _operands(command)))
        if not reads:  # a command that may write: does it name a control file?
            part.control = next((c for n in names if (c := places.control(n, command.bases))), None)
        reading.parts.append(part)
    for target, bases in zip(split.writes, split.write_bases):
        reading.control = reading.control or places.control(target, bases)
    loose = [(n, ()) for word in (*split.reads, *split.mentions) for n in names_in(word, places.home)]
    loose += [(n, bases) for word, bases in zip(split.writes, split.write_bases) for n in names_in(word, places.home)]
    reading.secret = next((p.secret for p in reading.parts if p.secret), None) or next(
        (s for n, bases in loose if (s := places.secret(n, bases))), None)
    reading.looks_only = (reading.problem is None and bool(reading.parts) and all(p.looks for p in reading.parts)
                          and reading.secret is None)
    return reading


@lru_cache(maxsize=1024)
def _names(command: SimpleCommand, home: str) -> tuple[str, ...]:
    out = [n for word in command.words[1:] for n in names_in(word, home)]
    if command.code:
        out += names_in(command.code, home)
    return tuple(out)


def _operands(command: SimpleCommand) -> list[str]:
    """The words that may name files (options' values included: `--file=x`)."""
    out = []
    for word in command.words[1:]:
        if word.startswith("-"):
            if "=" in word:
                out.append(word.split("=", 1)[1])
            continue
        out.append(word)
    return [w for w in out if w]


class RuleIndex:
    """A tool's rules by the program they are about, so a command is tried only against the
    rules that can match it: those about its program (by its last name: a rule about `rm` also
    matches `/bin/rm`), the bare ones, and for a command looked inside (an unknown program, code
    it runs) every deny and ask."""

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self._about: dict[str, list[Rule]] = {}
        self._inside: dict[str, list[Rule]] = {}
        self._decided: dict[tuple[SimpleCommand, bool], tuple[Rule | None, Rule | None]] = {}

    def decide(self, part: CommandPart) -> tuple[Rule | None, Rule | None]:
        """`_decide` for the part, kept per command (the rules are fixed for this index's life)."""
        key = (part.command, part.secret is not None)
        found = self._decided.get(key)
        if found is None:
            if len(self._decided) > 2048:
                self._decided.clear()
            found = self._decided[key] = _decide(self.for_command(part.command), part)
        return found

    def for_command(self, command: SimpleCommand) -> list[Rule]:
        name = command.words[0].rsplit("/", 1)[-1]
        inside = command.unread or bool(command.code)
        cache = self._inside if inside else self._about
        found = cache.get(name)
        if found is None:
            found = cache[name] = [r for r in self.rules if r.spec is None or r.words[:1] == (name,)
                                   or (inside and r.decision != "allow")]
        return found


def _decide(rules: list[Rule], part: CommandPart) -> tuple[Rule | None, Rule | None]:
    """(the strongest deny or ask that matches, else an allow that covers it; an allow that
    matched but does not cover it)."""
    command = part.command
    best: Rule | None = None
    missed: Rule | None = None
    for rule in rules:
        if rule.decision == "allow":
            if best is not None or not _matches(rule, command):
                continue
            if _covers(rule, part):
                best = rule
            else:
                missed = missed or rule
        elif (best is None or RANK[rule.decision] > RANK[best.decision]) and _matches(rule, command):
            best = rule
    return best, (missed if best is None else None)


def _matches(rule: Rule, command: SimpleCommand) -> bool:
    if rule.spec is None:
        return True
    loose = rule.decision != "allow"
    if command_matches(rule, command.words, command.literal, loose):
        return True
    if not loose:
        return False
    head = rule.words[0]
    if command.unread:  # after any word of a program tmg does not know
        for i in range(1, len(command.words)):
            if command.words[i].rsplit("/", 1)[-1] == head and command_matches(
                    rule, command.words[i:], command.literal[i:], True):
                return True
    return bool(command.code) and _mentioned(rule.words).search(command.code) is not None


def _covers(rule: Rule, part: CommandPart) -> bool:
    """An allow that matches covers the command, unless the command needs a rule naming it whole."""
    command = part.command
    if not (command.hidden or part.secret):
        return True
    if rule.spec is None:
        return part.secret is None  # `shell` allowed whole runs hidden code, but does not reach secrets
    if not all(command.literal):
        return False
    if rule.words == command.words:
        return True
    return rule.open_ended and part.secret is None and command.words[:len(rule.words)] == rule.words


@lru_cache(maxsize=512)
def _mentioned(words: tuple[str, ...]) -> re.Pattern[str]:
    """The rule's words as they would appear in code: `rm`, `"git", "push"`, `git push`."""
    between = r"[\s\"',\[\]()]+"
    return re.compile(r"(?<![\w.-])" + between.join(re.escape(w) for w in words) + r"(?![\w-])")
