"""The REPL's consent prompt: a tool call the permission engine asks about, shown exactly (the
command, the diff, the arguments), answered with one key.

    tmg asks: shell wants to run (running a command asks by default)
      touch x
    [y] yes once  [a] yes always: shell(touch)  [n] no  [m] no, with a note to the model

Keys typed ahead while the answer streamed are dropped first: a `y` meant for the next prompt
must never approve a command nobody has seen. Ctrl-C or Ctrl-D is "no".
"""

from __future__ import annotations

from typing import Callable

from tmg.environment import Environment
from tmg.permissions.engine import Answer, Question
from tmg.repl.asking import drop_typeahead, printable, read_line

MAX_PREVIEW_LINES = 40
_VERB = {"run": "wants to run", "write": "wants to change", "read": "wants to read", "unknown": "wants to call",
         "sample": "wants to ask your model", "network": "wants to fetch"}


class ConsentPrompt:
    def __init__(self, envr: Environment, before: Callable[[], None] = lambda: None) -> None:
        self._envr = envr
        self._before = before  # clears the waiting line

    async def __call__(self, question: Question) -> Answer:
        self._before()
        drop_typeahead(self._envr)
        out = self._envr.stdout
        out.write("\n" + "\n".join(self.lines(question)) + "\n")
        out.flush()
        choices = "y/a/n/m" if question.judgement.proposals else "y/n/m"
        key = (await self._read(f"allow? [{choices}] ")).strip().lower()[:1]
        if key == "y":
            return Answer("once")
        if key == "a" and question.judgement.proposals:
            return Answer("always")
        if key == "m":
            return Answer("no", (await self._read("note to the model: ")).strip())
        return Answer("no")

    def lines(self, question: Question) -> list[str]:
        action, judgement = question.action, question.judgement
        what = action.command if action.command is not None else (", ".join(action.paths) or action.url or "")
        # The file it changes is named; an MCP tool not marked read-only is called, not a file change.
        named = f" {printable(', '.join(action.paths))}" if action.paths and action.command is None else ""
        effect = "unknown" if action.server is not None and action.effect == "write" else action.effect
        head = f"tmg asks: {action.tool} {_VERB.get(effect, 'wants to call')}{named}"
        lines = [f"{head} ({judgement.reason})"]
        shown = action.preview or what
        if shown:
            body = shown.rstrip("\n").splitlines()
            if len(body) > MAX_PREVIEW_LINES:
                body = body[:MAX_PREVIEW_LINES] + [f"... {len(body) - MAX_PREVIEW_LINES} more lines"]
            lines.extend("  " + printable(line) for line in body)
        options = ["[y] yes once"]
        if judgement.proposals:
            options.append(f"[a] yes always: {', '.join(judgement.proposals)}")
        options += ["[n] no", "[m] no, with a note to the model"]
        lines.append("  ".join(options))
        return lines

    async def _read(self, message: str) -> str:
        return await read_line(message) or ""  # Ctrl-C or Ctrl-D: no answer, so no
