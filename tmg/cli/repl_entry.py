"""Where the interactive chat starts (the REPL arrives with its own issue)."""

from __future__ import annotations

from tmg.compose import ChatOptions
from tmg.environment import Environment
from tmg.errors import UsageError


def start_repl(options: ChatOptions, envr: Environment) -> int:
    raise UsageError('interactive chat is not available yet; ask one question with `tmg "question"`')
