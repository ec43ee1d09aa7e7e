"""Append-only JSONL history: one message per line, O(1) appends, fsync at each turn end.

A crash mid-write leaves a torn last line; loading skips it with a warning and keeps every line
before it. A line that is not valid JSON elsewhere is skipped the same way, never a crash.

A write that fails (a full disk) leaves the file as it was before it: the bytes of the record that
made it are cut again, so the next line never follows half a record, and HistoryWriteError says
in one line what was not stored.

A summary (the budget gatekeeper's, tmg.context.gatekeeper) is one more appended record, role
``summary``, naming the first stored message it does not replace (``meta.summary.keep_from``).
The messages it replaces stay in the file (``tmg -t`` shows them); only :attr:`History.model_view`,
what a provider is sent, starts with the summary instead of them.

A rewind (tmg.checkpoints.rewind) is one more appended record too, role ``rewound``, naming the
first stored message it takes back (``meta.rewound.from``, with that message's ``ts``): that
message and every one after it, up to the marker, stay in the file and in :attr:`History.messages`
(``tmg -t`` shows them, marked) but leave :attr:`History.model_view`, a summary made among them
included. The file is never rewritten for it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from tmg.errors import TmgError
from tmg.private_files import private_dirs, private_opener
from tmg.redaction import redact_values

Message = dict[str, Any]


class HistoryWriteError(TmgError):
    """The history could not be written (a full disk, a failing one): what was not stored, and why."""


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
        # Per model_view entry, the index in ``messages`` it stands for (-1: the summary's own).
        self._view_source: list[int] = []
        self._summary: Message | None = None  # the latest summary record in force
        self._rewound: list[tuple[int, int]] = []  # [from, to) ranges of ``messages`` a rewind took back
        self._warn = warn
        self._file = None
        self._full = False  # the last append failed for want of room
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
            try:
                with self.path.open("r+b") as f:
                    if torn_tail:  # cut the torn bytes so the next append starts on a line of its own
                        f.truncate(sum(len(line) + 1 for line in lines[:-1]))
                    else:  # a whole record whose newline never made it to disk: keep it, end its line
                        f.seek(0, os.SEEK_END)
                        f.write(b"\n")
            except OSError as exc:  # a full disk: the next append fails and says so
                self._warn(f"history {self.path}: could not mend its last line ({exc.strerror or exc})")

    def append(self, message: Message) -> Message:
        """Append one message (its whole line in one write, no fsync: :meth:`sync` makes the turn durable)."""
        record = {**message, "ts": message.get("ts") or round(time.time(), 3)}
        data = self._line(record).encode("utf-8")
        try:
            if self._file is None:
                private_dirs(self.path.parent)
                # the user's own record: 0600; kept open for the session
                self._file = open(self.path, "ab", buffering=0, opener=private_opener)  # noqa: SIM115
            append_whole(self._file, data)
        except OSError as exc:
            self._full = True
            raise HistoryWriteError(_not_stored(record, self.path, exc)) from exc
        self._full = False
        self._add(record)
        return record

    def _line(self, record: Message) -> str:
        return json.dumps(redact_values(record, self._redact), ensure_ascii=False, separators=(",", ":")) + "\n"

    def _add(self, record: Message) -> None:
        self.messages.append(record)
        if is_rewind(record):
            start = self._rewind_start(record)
            if start is not None:
                self._rewound.append((start, len(self.messages) - 1))
                self._summary = next((m for i, m in reversed(list(enumerate(self.messages)))
                                      if is_summary(m) and not self.is_rewound(i)), None)
                self._rebuild_view()
        elif is_summary(record):
            self._summary = record
            self._rebuild_view()
        elif not set_aside(record):
            self.model_view.append(for_model(record))
            self._view_source.append(len(self.messages) - 1)

    def _rebuild_view(self) -> None:
        """The view after a summary: the summary, then the stored messages from ``keep_from`` on
        (O(those messages): a summary is rare and keeps only the recent turns)."""
        summary = self._summary
        keep_from = summary_info(summary).get("keep_from", len(self.messages)) if summary else 0
        kept = [(i, m) for i, m in enumerate(self.messages[keep_from:], start=keep_from)
                if not is_summary(m) and not set_aside(m) and not is_rewind(m) and not self.is_rewound(i)]
        self.model_view, self._view_source = [], []
        if summary is not None:
            head = summary_messages(summary, first_kept_role=kept[0][1].get("role") if kept else "user")
            self.model_view.extend(head)
            self._view_source.extend([-1] * len(head))
        for i, m in kept:
            self.model_view.append(for_model(m))
            self._view_source.append(i)

    def add_summary(self, text: str, first_kept: Message | None, info: dict[str, Any]) -> Message:
        """Append a summary that replaces, in what is sent, every message before ``first_kept``
        (an entry of :attr:`model_view`; None: all of them). Returns the stored record."""
        keep_from = len(self.messages)
        if first_kept is not None:
            for view_index in range(len(self.model_view) - 1, -1, -1):  # the kept part is recent: short
                if self.model_view[view_index] is first_kept:
                    keep_from = self._view_source[view_index]
                    break
            else:
                raise ValueError("the first kept message is not in the history's view")
        usage = info.pop("usage", None)
        record = {"role": "summary", "content": text,
                  "meta": {"summary": {**info, "keep_from": keep_from}, **({"usage": usage} if usage else {})}}
        stored = self.append(record)
        self.sync()
        return stored

    def add_rewound(self, first: int, info: dict[str, Any]) -> Message:
        """Take back, from what the model sees, stored message ``first`` and every one after it
        (a rewind of the last prompts): one appended marker, made durable. Returns it."""
        record = {"role": "rewound", "content": "",
                  "meta": {"rewound": {**info, "from": first, "from_ts": self.messages[first].get("ts")}}}
        stored = self.append(record)
        self.sync()
        return stored

    def is_rewound(self, index: int) -> bool:
        """Whether stored message ``index`` was taken back by a rewind."""
        return any(start <= index < end for start, end in self._rewound)

    def _rewind_start(self, record: Message) -> int | None:
        """The index a marker takes back from: its ``from``, checked against the ``ts`` it names
        (a rewrite by the repair transformer may have moved it), else found by that ``ts``."""
        info = (record.get("meta") or {}).get("rewound") or {}
        at, ts = info.get("from"), info.get("from_ts")
        if isinstance(at, int) and 0 <= at < len(self.messages) - 1 and self.messages[at].get("ts") == ts:
            return at
        return next((i for i, m in enumerate(self.messages[:-1]) if ts is not None and m.get("ts") == ts), None)

    def last_turn_message(self) -> Message | None:
        """The last message of a turn (summaries and rewind markers are not part of one)."""
        for m in reversed(self.messages):
            if not is_summary(m) and not is_rewind(m):
                return m
        return None

    def set_aside(self, record: Message, reason: str) -> None:
        """Keep ``record`` (the last message) on record but out of what the model sees.

        Rewrites the file: rare (a prompt that failed before any answer), and the line is the last.
        """
        assert self.last_turn_message() is record
        record["meta"] = {**(record.get("meta") or {}), "failed": reason}
        if self.model_view:
            self.model_view.pop()
            self._view_source.pop()
        if self._writable:
            try:
                self.replace_all(list(self.messages))
            except HistoryWriteError as exc:  # the file keeps the prompt as it was: it still loads
                if not self._full:  # else the failed append has said it already
                    self._warn(str(exc))

    def sync(self) -> None:
        """Make everything appended so far durable (called at each turn end)."""
        if self._file is not None:
            try:
                os.fsync(self._file.fileno())
            except OSError as exc:
                raise HistoryWriteError(f"the session's history {self.path} could not be saved to disk "
                                        f"({exc.strerror or exc}); the last answer may be missing from it "
                                        "after a restart") from exc

    def replace_all(self, messages: list[Message]) -> None:
        """Rewrite the whole history atomically: only when a canonical transformer asks for it."""
        self.close()
        tmp = self._rewrite_temp()
        try:
            with open(tmp, "wb", opener=private_opener) as f:
                for m in messages:
                    f.write(self._line(m).encode("utf-8"))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise HistoryWriteError(f"the session's history {self.path} could not be rewritten "
                                    f"({exc.strerror or exc}); it is left as it was") from exc
        self.messages, self.model_view, self._view_source, self._summary = [], [], [], None
        self._rewound = []
        for m in messages:
            self._add(m)

    def _rewrite_temp(self) -> Path:
        return self.path.with_suffix(".jsonl.tmp")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def append_whole(file: Any, data: bytes) -> None:
    """Append ``data`` whole or not at all: after a short or failed write the bytes that made it
    are cut off again, so the file ends where it ended (and loads as it did)."""
    start = os.fstat(file.fileno()).st_size
    done = 0
    try:
        while done < len(data):
            done += file.write(data[done:])
    except OSError:
        try:
            os.ftruncate(file.fileno(), start)
        except OSError:
            pass  # a torn last line: loading skips it (and cuts it at the next writable load)
        raise


def _not_stored(record: Message, path: Path, exc: OSError) -> str:
    """The one line a failed append says: what was not stored, why, and what to do."""
    why = exc.strerror or str(exc)
    if record.get("role") == "user":
        what = "your prompt was not sent: it could not be stored"
    elif record.get("role") == "summary":
        what = "the summary of older turns was not stored"
    else:
        what = "the answer above was NOT stored in the session's history"
    return f"{what} ({why}, writing {path}); free some disk space and ask again"


def set_aside(message: Message) -> bool:
    """Whether a stored message is kept out of what the model sees (a failed prompt)."""
    meta = message.get("meta")
    return isinstance(meta, dict) and bool(meta.get("failed"))


def is_rewind(message: Message) -> bool:
    return message.get("role") == "rewound"


def is_summary(message: Message) -> bool:
    return message.get("role") == "summary"


def summary_info(message: Message) -> dict[str, Any]:
    meta = message.get("meta")
    info = meta.get("summary") if isinstance(meta, dict) else None
    return info if isinstance(info, dict) else {}


SUMMARY_HEADING = ("[Summary of the earlier conversation, written by tmg when the context grew too long; it "
                   "replaces those messages here (the user can still read them). Continue from it.]")
SUMMARY_ACK = "Understood: I have the summary of our earlier conversation and will continue from it."


def summary_messages(record: Message, first_kept_role: str = "user") -> list[Message]:
    """How a summary is sent: as a user message (every provider accepts one first), answered
    by a short acknowledgement when the kept turns start with a user message (roles alternate)."""
    text = record.get("content") if isinstance(record.get("content"), str) else ""
    out: list[Message] = [{"role": "user", "content": f"{SUMMARY_HEADING}\n\n{text}"}]
    if first_kept_role == "user":
        out.append({"role": "assistant", "content": SUMMARY_ACK})
    return out


# ts and meta: bookkeeping; images: a tool result's pictures, sent only with the prompt that made
# them (tmg.llm.tool_images), never as a field of the message.
_STORAGE_ONLY = ("ts", "meta", "images")


def for_model(message: Message) -> Message:
    """The message as a provider should see it: storage-only fields removed."""
    view = {k: v for k, v in message.items() if k not in _STORAGE_ONLY}
    if view.get("role") == "assistant" and view.get("content") is None:
        view["content"] = ""  # sessions stored before 0.x held null beside tool calls; llama.cpp rejects it
    return view
