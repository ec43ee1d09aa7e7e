"""The REPL's consent prompt: a tool call the permission engine asks about, shown exactly (the
whole command, the diff, a new file's content, the arguments, or how much of it is not shown),
answered with one key.

    tmg asks: shell wants to run (running a command asks by default)
      touch notes.txt
      "this session" and "always" allow: shell(touch notes.txt)
    [y] yes once  [s] yes, this session  [a] yes, always  [n] no  [m] no, and tell the model why
    allow? [y/s/a/n/m]

Keys typed ahead while the answer streamed are dropped first: a `y` meant for the next prompt
must never approve a command nobody has seen. Ctrl-C, Ctrl-D or Escape is "no".
"""

from __future__ import annotations

from typing import Callable

from tmg.environment import Environment
from tmg.permissions.engine import Answer, Question
from tmg.repl.asking import drop_typeahead, printable, read_key, read_line

MAX_PREVIEW_LINES = 40
MAX_LINE_CHARS = 400  # a longer line is cut, saying how much
_VERB = {"run": "wants to run", "write": "wants to change", "read": "wants to read", "unknown": "wants to call",
         "sample": "wants to ask your model", "widen": "would let tools do more", "network": "wants to fetch"}


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
        keys = "ysanm" if question.judgement.proposals else "ynm"
        key = await read_key(f"allow? [{'/'.join(keys)}] ", keys)
        if key == "y":
            return Answer("once")
        if key == "s":
            return Answer("session")
        if key == "a":
            return Answer("always")
        if key == "m":
            return Answer("no", (await read_line("note to the model: ") or "").strip())
        return Answer("no")

    def lines(self, question: Question) -> list[str]:
        action, judgement = question.action, question.judgement
        what = action.command if action.command is not None else (", ".join(action.paths) or action.url or "")
        # The file it changes is named; an MCP tool not marked read-only is called, not a file change.
        named = f" {printable(', '.join(action.paths))}" if action.paths and action.command is None else ""
        effect = "unknown" if action.server is not None and action.effect == "write" else action.effect
        head = f"tmg asks: {action.tool} {_VERB.get(effect, 'wants to call')}{named}"
        lines = [f"{head} ({printable(judgement.reason)})"]
        shown = action.preview or what
        if shown:
            lines.extend("  " + line for line in bounded(shown))
        if judgement.proposals:
            lines.append(f"  \"this session\" and \"always\" allow: {', '.join(judgement.proposals)}")
        elif judgement.why_no_always:
            lines.append(f"  (no \"always\": {printable(judgement.why_no_always)})")
        options = ["[y] yes once"]
        if judgement.proposals:
            options += ["[s] yes, this session", "[a] yes, always"]
        options += ["[n] no", "[m] no, and tell the model why"]
        lines.append("  ".join(options))
        return lines


def bounded(text: str) -> list[str]:
    """`text` as lines to show, at most MAX_PREVIEW_LINES of at most MAX_LINE_CHARS, each cut
    saying how much is not shown."""
    body = text.rstrip("\n").splitlines() or [""]
    out = []
    for line in body[:MAX_PREVIEW_LINES]:
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]} [... {len(line) - MAX_LINE_CHARS} more characters on this line]"
        out.append(printable(line))
    if len(body) > MAX_PREVIEW_LINES:
        hidden = body[MAX_PREVIEW_LINES:]
        out.append(f"[... {len(hidden)} more lines ({sum(len(h) + 1 for h in hidden)} characters) not shown]")
    return out
