"""The human-readable transcript, written as the session goes (Markdown, appended per event)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from tmg.private_files import private_dirs, private_opener
from tmg.session.history import append_whole

Redact = Callable[[str], str]


def _clock() -> str:
    return time.strftime("%H:%M:%S")


def _after_tools(turn: int) -> str:
    """``turn`` counts the model calls of one prompt: every answer was "(turn 1)" but those
    after tool results, so only they are marked."""
    return " (after tool results)" if turn > 1 else ""


class Transcript:
    """Appends one block per event; ``redact`` keeps config secrets out of the file.

    Only what was said is redacted (prompt, answer, tool arguments and outcome, notices, errors),
    never the block's own heading: the same rule as the history's records.

    The transcript is the human-readable copy; the history is the record. A write that fails (a
    full disk) never ends a turn: ``warn`` says once that the transcript misses blocks, and each
    later block is tried again."""

    def __init__(self, path: Path, session_id: str, mode: str, redact: Redact = lambda s: s,
                 warn: Callable[[str], None] = lambda _t: None) -> None:
        self.path = path
        self._redact = redact
        self._warn = warn
        self._failed = False
        fresh = not path.exists()
        private_dirs(path.parent)
        # the user's own record: 0600; unbuffered: nothing half-written waits in memory
        self._file = open(path, "ab", buffering=0, opener=private_opener)  # noqa: SIM115
        if fresh:
            self._write(f"# tmg session {session_id} · mode {mode} · {time.strftime('%Y-%m-%d')}\n")

    def _said(self, text: str) -> str:
        return self._redact(text.rstrip())

    def _write(self, text: str) -> None:
        try:
            append_whole(self._file, (text + "\n").encode("utf-8"))  # a block is never left half written
        except OSError as exc:
            if not self._failed:
                self._failed = True
                self._warn(f"the transcript {self.path} could not be written ({exc.strerror or exc}); it misses "
                           "what happens until there is room again")
            return
        self._failed = False

    def prompt(self, text: str) -> None:
        self._write(f"\n## {_clock()} · you\n\n{self._said(text)}\n")

    def answer(self, text: str, model: str, turn: int) -> None:
        self._write(f"### {_clock()} · {model}{_after_tools(turn)}\n\n{self._said(text)}\n")

    def interrupted(self, partial: str, model: str, turn: int) -> None:
        body = self._said(partial) + "\n\n" if partial.strip() else ""
        self._write(f"### {_clock()} · {model}{_after_tools(turn)} [interrupted]\n\n{body}_answer interrupted by the user_\n")

    def memory(self, ids: list[str]) -> None:
        """The engrams recalled into this prompt's context, by id."""
        self._write(f"> memory: recalled {', '.join(ids)}\n")

    def tool_call(self, name: str, arguments: str, outcome: str) -> None:
        args = self._said(arguments)  # masked before it is cut: a cut secret would not match
        args = args.replace("\r", "\\r").replace("\n", "\\n")  # one line, like the stderr line
        args = args if len(args) <= 200 else args[:200] + "…"
        self._write(f"> tool `{name}` `{args}` → {self._said(outcome)}\n")

    def usage(self, prompt_tokens: int, completion_tokens: int, cost: float | None, reported: bool = True) -> None:
        if not reported:
            self._write("_tokens unknown (the provider reported no usage) · cost n/a_\n")
            return
        price = f"${cost:.4f}" if cost is not None else "cost n/a"
        self._write(f"_tokens {prompt_tokens} in / {completion_tokens} out · {price}_\n")

    def permission(self, text: str) -> None:
        """One permission decision: what was allowed, asked, refused, and by what."""
        self._write(f"> **permission** {_clock()}: {self._said(text)}\n")

    def notice(self, text: str) -> None:
        self._write(f"> **notice** {_clock()}: {self._said(text)}\n")

    def summary(self, text: str, info: dict) -> None:
        """A summary of the turns above it, marked: from here on it is sent in their place."""
        count = info.get("messages", 0)
        model = f" by {info['model']}" if info.get("model") else ""
        focus = f", focus: {info['focus']}" if info.get("focus") else ""
        quoted = "\n".join(f"> {line}" if line else ">" for line in self._said(text).splitlines())
        self._write(f"### {_clock()} · summary of the {count} earlier messages above (written{model}{focus}; "
                    f"sent in their place from here on, the originals stay above)\n\n{quoted}\n")

    def error(self, text: str) -> None:
        self._write(f"> **error** {_clock()}: {self._said(text)}\n")

    def close(self) -> None:
        self._file.close()
