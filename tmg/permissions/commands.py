"""What a shell line runs, as the permission engine judges it: each simple command (looked
through wrappers, shells and interpreters by tmg.permissions.shell) and what the line does
besides (redirections, words outside commands, a problem reading it)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[str, ...]  # as it runs: wrappers looked through, quotes removed
    literal: tuple[bool, ...] = ()  # per word: it means exactly its text (no expansion in it)
    judged_only: bool = False  # a deny or ask about it counts, but it needs no allow of its own (sudo's inner)
    hidden: str | None = None  # why it may do more than its words show: only a rule naming it whole allows it
    code: str = ""  # the program text it runs (python -c, an awk program): a denied word in it denies
    unread: bool = False  # its arguments may hold a command tmg did not find: a deny or ask looks inside
    bases: tuple[str | None, ...] = ()  # folders a `cd` before it may have moved to (None: not known)

    @property
    def text(self) -> str:
        return shlex.join(self.words)

    def __post_init__(self) -> None:
        if not self.literal:
            object.__setattr__(self, "literal", (True,) * len(self.words))


@dataclass
class Split:
    commands: list[SimpleCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # files written by redirection (`> out.txt`)
    write_bases: list[tuple[str | None, ...]] = field(default_factory=list)  # the `cd`s before each of them
    reads: list[str] = field(default_factory=list)  # files read by redirection (`< in.txt`)
    mentions: list[str] = field(default_factory=list)  # words outside any command (`for f in ~/.ssh/*`)
    problem: str | None = None  # why the line cannot be judged part by part (then it asks)
    bases: list[str | None] = field(default_factory=list)  # where `cd` went, in order, while walking
    assigned: dict[str, list[str]] = field(default_factory=dict)  # literal values the line gives variables

    def trouble(self, why: str) -> None:
        if self.problem is None:
            self.problem = why

    def add(self, words: tuple[str, ...], literal: tuple[bool, ...], judged_only: bool, **more) -> None:
        self.commands.append(SimpleCommand(words, literal, judged_only, bases=tuple(self.bases), **more))
