"""What a chat was asked for on the command line, as one value: the session runner and the
composition root read it, the CLI and the REPL make it (kept import-light: the ``-t`` path uses it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChatOptions:
    """-c, --new, --mode, --model, --raw, --permissions, --max-turns and --max-budget-usd; None: the
    config decides."""

    config_path: str | None = None
    new: bool = False
    mode: str | None = None
    model: str | None = None
    raw: bool = False
    permissions: str | None = None  # --permissions MODE (else PERMISSIONS.MODE)
    # -- issue 25, the scripting contract: limits for this run, over the config's --
    max_turns: int | None = None  # --max-turns N (else MAX_TURNS)
    max_budget_usd: float | None = None  # --max-budget-usd X (else MAX_BUDGET_USD)
