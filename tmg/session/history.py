"""Append-only JSONL history: one message per line, O(1) appends, fsync at each turn end.

A crash mid-write leaves a torn last line; loading skips it with a warning and keeps every line
before it. A line that is not valid JSON elsewhere is skipped the same way, never a crash.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from tmg.config.secrets import redact_values

Message = dict[str, Any]


class History:
    """The stored messages of one session, in OpenAI chat format plus a ``ts`` field."""

    def __init__(self, path: Path, warn: Callable[[str], None] = lambda _m: None, writable: bool = True,
                 redact: Callable[[str], str] = lambda s: s) -> None:
        self.path = path
        # Config secrets never reach the file (the messages in memory keep them): masked in the
        # record's string values, never in its JSON, so a secret equal to a token cannot break it.
        self._redact = redact
        self._writable = writable  # readers (`tmg -t`) never touch the file
        self.messages: list[Message] = []
        # The same messages as a provider sees them, built once per message rather than per turn.
        self.model_view: list[Message] = []
        self._warn = warn
        self._file = None
        self._load()

    def _load(self) -> None:
        if self._writable:
            # A rewrite (replace_all) killed before its rename: the history itself is whole.
            self._rewrite_temp().unlink(missing_ok=True)
        if not self.path.exists():
            return
        with self.path.open("rb") as f:
            lines = f.read().split(b"\n")
        unterminated = bool(lines) and lines[-1] != b""  # no newline after the last record
        torn_tail = False
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
                if not isinstance(record, dict) or "role" not in record:
                    raise ValueError("not a message")
            except ValueError:
                last = number == len(lines) and unterminated
                torn_tail |= last
                what = "a torn last line (an interrupted write)" if last else f"malformed line {number}"
                self._warn(f"history {self.path}: skipped {what}; the messages before it are kept")
                continue
            self._add(record)
        if unterminated and self._writable:
            with self.path.open("r+b") as f:
                if torn_tail:  # cut the torn bytes so the next append starts on a line of its own
                    f.truncate(sum(len(line) + 1 for line in lines[:-1]))
                else:  # a whole record whose newline never made it to disk: keep it, end its line
                    f.seek(0, os.SEEK_END)
                    f.write(b"\n")

    def append(self, message: Message) -> Message:
        """Append one message (buffered write, no fsync: :meth:`sync` makes the turn durable)."""
        record = {**message, "ts": message.get("ts") or round(time.time(), 3)}
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(self._line(record))
        self._file.flush()
        self._add(record)
        return record

    def _line(self, record: Message) -> str:
        return json.dumps(redact_values(record, self._redact), ensure_ascii=False, separators=(",", ":")) + "\n"

    def _add(self, record: Message) -> None:
        self.messages.append(record)
        if not set_aside(record):
            self.model_view.append(for_model(record))

    def set_aside(self, record: Message, reason: str) -> None:
        """Keep ``record`` (the last message) on record but out of what the model sees.

        Rewrites the file: rare (a prompt that failed before any answer), and the line is the last.
        """
        assert self.messages and self.messages[-1] is record
        record["meta"] = {**(record.get("meta") or {}), "failed": reason}
        if self.model_view:
            self.model_view.pop()
        if self._writable:
            self.replace_all(list(self.messages))

    def sync(self) -> None:
        """Make everything appended so far durable (called at each turn end)."""
        if self._file is not None:
            os.fsync(self._file.fileno())

    def replace_all(self, messages: list[Message]) -> None:
        """Rewrite the whole history atomically: only when a canonical transformer asks for it."""
        self.close()
        tmp = self._rewrite_temp()
        with tmp.open("w", encoding="utf-8") as f:
            for m in messages:
                f.write(self._line(m))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self.messages, self.model_view = [], []
        for m in messages:
            self._add(m)

    def _rewrite_temp(self) -> Path:
        return self.path.with_suffix(".jsonl.tmp")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def set_aside(message: Message) -> bool:
    """Whether a stored message is kept out of what the model sees (a failed prompt)."""
    meta = message.get("meta")
    return isinstance(meta, dict) and bool(meta.get("failed"))


def for_model(message: Message) -> Message:
    """The message as a provider should see it: storage-only fields removed."""
    view = {k: v for k, v in message.items() if k not in ("ts", "meta")}
    if view.get("role") == "assistant" and view.get("content") is None:
        view["content"] = ""  # sessions stored before 0.x held null beside tool calls; llama.cpp rejects it
    return view
