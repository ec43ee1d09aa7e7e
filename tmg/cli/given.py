"""The chat's options given before a subcommand (``tmg -c work.yaml memory list``), as its commands
read them: tmg.cli.route hands them over as the click context's ``obj``, and each command honours
those that concern it, its own options (after its name) winning. The one table of which command
honours which is HONOURED (tests/cli/test_global_options.py holds every command to it)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tmg.session.options import ChatOptions

# Command -> the ChatOptions fields it honours; every other global option is accepted and has no
# bearing on it (--raw on `tmg sessions`: its output is plain already).
HONOURED: dict[str, frozenset[str]] = {
    "sessions": frozenset({"config_path", "mode"}),
    "config": frozenset({"config_path", "mode", "model", "system"}),
    "doctor": frozenset({"config_path", "model"}),
    "mcp": frozenset({"config_path"}),
    "memory": frozenset({"config_path"}),
    "compact": frozenset({"config_path", "mode", "model"}),
    "permissions": frozenset({"config_path", "permissions"}),
    "skills": frozenset({"mode"}),
    "trust": frozenset(),
}


def given(ctx: Any = None) -> ChatOptions:
    """The options given before the subcommand's name (none: the defaults). ``ctx`` None: the
    command being run (a shared helper such as `tmg memory`'s, for every command that uses it)."""
    if ctx is None:
        import click

        ctx = click.get_current_context(silent=True)
    line = ctx.find_root().obj if ctx is not None else None
    return getattr(line, "options", None) or ChatOptions()


def options_for(ctx: Any = None, **own: Any) -> ChatOptions:
    """The options a command runs with: its own (those not None), else those given before it."""
    return replace(given(ctx), **{name: value for name, value in own.items() if value is not None})
