"""The Guard's limits on one prompt: MAX_TURNS model calls (``--max-turns``) and MAX_BUDGET_USD
spent on them (``--max-budget-usd``). A limit reached stops the prompt before its next model
call, with one line that says which limit and how to raise it."""

from __future__ import annotations

from typing import Callable

from tmg.config.model import Config
from tmg.errors import BudgetLimitError, TurnLimitError


def check_limits(index: int, cfg: Config, spent: float | None, notice: Callable[[str], None]) -> None:
    """Raise when turn ``index`` (1-based) may not call the model: past MAX_TURNS, or ``spent``
    (USD so far this prompt; None when a call was not priced) at MAX_BUDGET_USD."""
    if index > cfg.max_turns:
        name, where = _named(cfg, "MAX_TURNS")
        raise TurnLimitError(f"stopped after {name} ({cfg.max_turns}) model calls for this prompt without a final "
                             f"answer; raise {name}{where} if the task really needs more")
    cap = cfg.max_budget_usd
    if cap is None or index == 1:
        return
    name, where = _named(cfg, "MAX_BUDGET_USD")
    if spent is None:
        if index == 2:  # the cost stays unknown for the rest of the prompt: said once
            notice(f"{name} ${cap:g} cannot be checked: the cost of this model's calls is unknown (not in the price "
                   "map, or the provider sent no usage); the prompt goes on without a spend cap")
        return
    if spent >= cap:
        raise BudgetLimitError(f"stopped after {index - 1} model calls for this prompt without a final answer: they "
                               f"cost ${spent:.4f}, reaching {name} (${cap:g}); raise {name}{where} if the task "
                               "is worth more")


def _named(cfg: Config, key: str) -> tuple[str, str]:
    """How the user set ``key``: the flag (``--max-turns``) or the config key, and where to raise it."""
    origin = cfg.origin(key)
    return (origin, "") if origin.startswith("--") else (key, " in the config")
