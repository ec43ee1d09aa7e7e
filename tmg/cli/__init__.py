"""The command line. Kept light: ``--help``, ``--version`` and ``-t`` never import litellm or mcp."""

from __future__ import annotations

import sys

ADMIN_COMMANDS = ("sessions", "config", "doctor")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``tmg`` console script."""
    from tmg.cli.errors import run_guarded

    args = sys.argv[1:] if argv is None else list(argv)
    if args and args[0] in ADMIN_COMMANDS:
        from tmg.cli.admin import app
    else:
        from tmg.cli.chat import app
    run_guarded(lambda: app(args=args, prog_name="tmg", standalone_mode=False), debug="--debug" in args)
