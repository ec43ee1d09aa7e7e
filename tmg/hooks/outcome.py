"""What a hook's run means, by Claude Code's protocol (docs/hooks.md has the subset tmg reads).

- exit 0: success. Its stdout, when it is a JSON object, may say ``"continue": false`` (stop,
  with ``stopReason``), ``"decision": "block"`` with a ``reason``, ``systemMessage`` (for the
  user) and ``hookSpecificOutput`` {``permissionDecision: "deny"`` with its reason,
  ``updatedInput``, ``additionalContext``}. Plain stdout of UserPromptSubmit and SessionStart
  is context for the model; of the other events it is ignored.
- exit 2: block, the hook's stderr the reason (SessionStart and PreCompact cannot block: their
  stderr is said to the user).
- any other exit, a timeout, JSON that does not parse: a failure, said, never a block.

tmg differs on purpose: ``permissionDecision: "allow"`` (and the old ``decision: "approve"``)
does not skip tmg's permission engine, and ``"ask"`` is what the engine does anyway: a hook may
forbid or rewrite, never allow more than the rules do.
"""

from __future__ import annotations

import json
from typing import Any

from tmg.hooks.process import CommandRun

MAX_CONTEXT_CHARS = 10_000  # of what one hook adds for the model, as Claude Code caps it
UNBLOCKABLE = ("SessionStart", "PreCompact")
_STDOUT_IS_CONTEXT = ("UserPromptSubmit", "SessionStart")


class Outcome:
    """What one hook (or several, merged) asks of tmg. A plain class, not a dataclass: this
    module loads on every one-shot's path, hooks or none."""

    def __init__(self, block: str | None = None, context: list[str] | None = None,
                 updated_input: dict[str, Any] | None = None, stop: str | None = None,
                 messages: list[str] | None = None, failures: list[str] | None = None) -> None:
        self.block = block  # the reason the model reads (a tool call not run; go on, for Stop)
        self.context = context or []  # text added for the model
        self.updated_input = updated_input  # a rewritten tool call (PreToolUse)
        self.stop = stop  # "continue": false: the prompt stops, with this reason
        self.messages = messages or []  # for the user: stderr and the transcript
        self.failures = failures or []  # it could not say anything: said, not blocking

    def merge(self, other: "Outcome") -> None:
        """Hooks of one event run side by side: any block blocks, every context is added."""
        if other.block is not None:
            self.block = other.block if self.block is None else f"{self.block}; {other.block}"
        if other.stop is not None and self.stop is None:
            self.stop = other.stop
        if other.updated_input is not None:
            if self.updated_input is not None:
                self.failures.append("two hooks rewrote the same tool call; the first one's rewrite is used")
            else:
                self.updated_input = other.updated_input
        self.context.extend(other.context)
        self.messages.extend(other.messages)
        self.failures.extend(other.failures)


def read_outcome(event: str, run: CommandRun, timeout: float) -> Outcome:
    if run.error:
        return Outcome(failures=[run.error])
    if run.timed_out:
        return Outcome(failures=[f"it did not finish within {timeout:g} s (its TIMEOUT), so it was stopped"])
    if run.code == 2:
        reason = run.stderr.strip() or "(the hook gave no reason on stderr)"
        if event in UNBLOCKABLE:
            return Outcome(messages=[f"it exited with 2: {_first_line(reason)}"])
        return Outcome(block=_bounded(reason))
    if run.code != 0:
        detail = f": {_first_line(run.stderr)}" if run.stderr.strip() else ""
        return Outcome(failures=[f"it exited with {run.code}{detail}"])
    text = run.stdout.strip()
    if not text.startswith("{"):
        return Outcome(context=[_bounded(text)] if text and event in _STDOUT_IS_CONTEXT else [])
    try:
        data = json.loads(text)
    except ValueError as exc:
        return Outcome(failures=[f"its output is not valid JSON ({exc})"])
    if not isinstance(data, dict):
        return Outcome(failures=["its JSON output is not an object"])
    return _from_json(event, data)


def _from_json(event: str, data: dict[str, Any]) -> Outcome:
    out = Outcome()
    if data.get("continue") is False:
        out.stop = _text(data.get("stopReason")) or f"a {event} hook said not to continue"
    if _text(data.get("systemMessage")):
        out.messages.append(_first_line(_text(data["systemMessage"])))
    if data.get("decision") == "block":
        out.block = _bounded(_text(data.get("reason")) or "(the hook gave no reason)")
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict):
        if specific.get("permissionDecision") == "deny":
            reason = _text(specific.get("permissionDecisionReason")) or "(the hook gave no reason)"
            out.block = _bounded(reason) if out.block is None else f"{out.block}; {_bounded(reason)}"
        updated = specific.get("updatedInput")
        if updated is not None and event == "PreToolUse":
            if isinstance(updated, dict):
                out.updated_input = updated
            else:
                out.failures.append("its updatedInput is not a JSON object; the call is not rewritten")
        if _text(specific.get("additionalContext")).strip():
            out.context.append(_bounded(_text(specific["additionalContext"]).strip()))
    if out.block is not None and event in UNBLOCKABLE:
        out.messages.append(f"it asked to block, which a {event} hook cannot: {_first_line(out.block)}")
        out.block = None
    return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _bounded(text: str) -> str:
    if len(text) <= MAX_CONTEXT_CHARS:
        return text
    return text[:MAX_CONTEXT_CHARS] + f"\n[... {len(text) - MAX_CONTEXT_CHARS:,} more characters from the hook cut]"


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[:limit] + "…"
