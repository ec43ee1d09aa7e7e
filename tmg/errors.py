"""Errors a user can act on, each with the exit code SPEC §1 gives it."""

from __future__ import annotations


class TmgError(Exception):
    """A failure reported to the user as one line (no traceback unless --debug)."""

    exit_code = 1


class UsageError(TmgError):
    """The command line itself is wrong."""

    exit_code = 2


class ConfigError(TmgError):
    """The config file or environment overrides are invalid; the message names the key."""


class SessionBusyError(TmgError):
    """Another tmg process holds the session lock."""


class TurnLimitError(TmgError):
    """A prompt reached MAX_TURNS model calls."""


class BudgetLimitError(TmgError):
    """A prompt spent MAX_BUDGET_USD (--max-budget-usd) before its final answer."""


class HookStopError(TmgError):
    """A command hook said to stop (``"continue": false``, or a UserPromptSubmit block)."""
