"""Where the interactive chat starts: ``tmg`` with a terminal on stdin and stdout."""

from __future__ import annotations

from tmg.session.options import ChatOptions
from tmg.environment import Environment


def start_repl(options: ChatOptions, envr: Environment) -> int:
    from tmg.repl.loop import run_repl

    return run_repl(options, envr)
