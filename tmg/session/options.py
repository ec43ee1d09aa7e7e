"""What a chat was asked for on the command line, as one value: the session runner and the
composition root read it, the CLI and the REPL make it (kept import-light: the ``-t`` path uses it)."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SessionWish:
    """What the command line asked for; at most one of the three is set (the CLI checks)."""

    new: bool = False
    resume: str | None = None  # an id or id prefix ("" is the REPL's picker, resolved before this)
    latest: bool = False  # --continue


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
    # -- which session, and its system prompt (issue 25, item 5) --
    resume: str | None = None  # --resume [ID]: an id prefix; "" asks the REPL's picker
    latest: bool = False  # --continue: the most recently active session of this project
    system: str | None = None  # -s/--system TEXT: PERSON for this run

    @property
    def session_wish(self) -> SessionWish:
        """Which session the line asks for (tmg.session.choice)."""
        return SessionWish(new=self.new, resume=self.resume, latest=self.latest)

    def first_open_only(self) -> ChatOptions:
        """These options for the sessions a REPL opens after its first (/new, /mode): --resume and
        --continue chose the first one only."""
        return replace(self, resume=None, latest=False)
