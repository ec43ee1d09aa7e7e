"""Which app a command line is for: a subcommand (``tmg [GLOBAL OPTIONS] doctor ...``) or the chat.

The rule, also in ``tmg --help``: the first word that is not an option (nor an option's value)
names a subcommand when it is one; the global options before it move behind it, so
``tmg -c f.yaml doctor`` is ``tmg doctor -c f.yaml``. A prompt that is exactly a subcommand's
name is asked after ``--`` (``tmg -- doctor``): nothing reaches the model by accident.
"""

from __future__ import annotations

from typing import Iterable, Sequence

DEBUG = "--debug"  # every command takes it: it is the same switch as TMG_DEBUG=1

# Every command and sub-app registered on tmg.cli.admin's app. A table rather than asking typer,
# so that routing a prompt imports neither typer nor the subcommands' modules; a test
# (tests/cli/test_route.py) fails, naming the word, when a subcommand is added without it.
SUBCOMMANDS = frozenset({"sessions", "config", "doctor", "trust", "memory", "compact", "permissions", "skills",
                         "mcp", "rewind"})


def first_word(args: Sequence[str], takes_value: Iterable[str]) -> int | None:
    """The index of the first argument that is neither an option nor an option's value; None
    when there is none before ``--`` (what follows ``--`` is always the prompt)."""
    takes_value = set(takes_value)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return None
        if arg in takes_value:
            i += 2
            continue
        if arg.startswith("-") and arg != "-":
            i += 1
            continue
        return i
    return None


def subcommand_args(args: Sequence[str], names: Iterable[str], takes_value: Iterable[str]) -> list[str] | None:
    """The argument list for the subcommand app when ``args`` name a subcommand, else None.

    The global options before the subcommand's name go after its words (a subcommand that does not take
    one says so as a usage error); ``--debug`` is taken out wherever it is, the caller applies it.
    """
    at = first_word(args, takes_value)
    if at is None or args[at] not in set(names):
        return None
    before = [a for a in args[:at] if a != DEBUG]
    rest = list(args[at + 1:])
    cut = rest.index("--") if "--" in rest else len(rest)
    # Behind the subcommand's own words, so a sub-app's command (``memory list``) gets them too.
    return [args[at], *(a for a in rest[:cut] if a != DEBUG), *before, *rest[cut:]]
