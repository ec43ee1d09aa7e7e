"""The chat's options given before a subcommand (``tmg -c work.yaml memory list``), as its commands
read them: tmg.cli.route reads them with the chat's parser and hands them over here before the
subcommand runs (one command per process), and each command honours those that concern it, its
own options (after its name) winning. HONOURED is the one table of which command honours which
(tests/cli/test_global_options.py holds every command to it); every other option is accepted
and has no bearing on that command (--raw on `tmg sessions`: its output is plain already)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tmg.session.options import ChatOptions

# Command -> the ChatOptions fields it honours.
HONOURED: dict[str, frozenset[str]] = {
    "sessions": frozenset({"config_path", "mode"}),
    "config": frozenset({"config_path", "mode", "model", "system"}),
    "doctor": frozenset({"config_path", "model"}),
    "mcp": frozenset({"config_path"}),
    "memory": frozenset({"config_path"}),
    "compact": frozenset({"config_path", "mode", "model"}),
    "rewind": frozenset({"config_path", "mode"}),
    "permissions": frozenset({"config_path", "permissions"}),
    "skills": frozenset({"mode"}),
    "trust": frozenset(),
}

_given = ChatOptions()


def hand_over(options: ChatOptions | None) -> None:
    """The options given before the subcommand about to run (None: none)."""
    global _given
    _given = options or ChatOptions()


def options_for(**own: Any) -> ChatOptions:
    """The options a command runs with: its own (those not None), else those given before it."""
    return replace(_given, **{name: value for name, value in own.items() if value is not None})
