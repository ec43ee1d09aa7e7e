"""Rewinding the last N prompts: which they are, what taking them back restores, and doing it.

A plan (`plan_rewind`) reads the session's history and checkpoint log: for each file the prompts
changed, the content before the first of them touched it and what the last of them left. A file
whose content now differs from what they left was changed since (by the user, an editor, a later
command): it is a conflict, shown as a short diff, and restored only when the caller says so.
`apply_rewind` restores (a file they created is removed), appends the history's marker (the
exchanges leave what the model is sent; the file keeps them) and records the rewind in the log.
What memory learned from them is retracted by the caller (tmg.memory.retract), with the writes
the plan lists; shell commands cannot be undone, so the plan names them.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tmg.atomic_file import replace_file
from tmg.checkpoints.log import CheckpointLog, PromptKey, digest
from tmg.errors import UsageError
from tmg.session.history import History, is_rewind, set_aside

DIFF_LINES = 12  # a conflict's diff, at most, as shown
_TEXT = 60  # a prompt's words, as listed


@dataclass
class Prompt:
    key: PromptKey
    text: str  # its first words
    files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)

    def line(self, number: int) -> str:
        when = time.strftime("%H:%M:%S", time.localtime(self.key.ts))
        what = [f"changed {', '.join(Path(f).name for f in self.files)}"] if self.files else []
        what += [f"ran {len(self.commands)} command{'s' if len(self.commands) > 1 else ''}"] if self.commands else []
        return f"{number}. {when}  {self.text}" + (f"  ({'; '.join(what)})" if what else "")


@dataclass
class FileChange:
    path: Path
    existed: bool  # before the first rewound prompt changed it
    before: str | None  # its content then (a blob), None: not kept (``why``) or it did not exist
    why: str = ""  # why it was not kept
    left: str | None = None  # what the last rewound prompt left (None: no file)
    mode: int | None = None

    def current(self) -> str | None:
        try:
            return digest(self.path.read_bytes()) if self.path.is_file() else None
        except OSError:
            return None

    @property
    def restorable(self) -> bool:
        return not self.existed or self.before is not None

    def changed_since(self) -> bool:
        return self.current() != self.left

    def diff(self, log: CheckpointLog) -> str:
        """What changed since the prompt left it: its version, then the file now, a short diff."""
        try:
            then = log.blob(self.left).decode("utf-8", "replace") if self.left else ""
            now = self.path.read_text(encoding="utf-8", errors="replace") if self.path.is_file() else ""
        except OSError as exc:
            return f"  (cannot show it: {exc.strerror or exc})"
        rows = list(difflib.unified_diff(then.splitlines(), now.splitlines(), "as the rewound prompt left it",
                                         "as it is now", n=1, lineterm=""))
        shown = [f"  {r}" for r in rows[:DIFF_LINES]]
        if len(rows) > DIFF_LINES:
            shown.append(f"  ... {len(rows) - DIFF_LINES} more lines")
        return "\n".join(shown) or "  (the file was removed)"


@dataclass
class RewindPlan:
    prompts: list[Prompt]  # oldest first
    files: list[FileChange]
    commands: list[str]
    memory: list[dict[str, Any]]  # the memory records of those prompts (kind, id, text)

    def conflicts(self) -> list[FileChange]:
        return [f for f in self.files if f.restorable and f.changed_since()]


def recent_prompts(history: History, log: CheckpointLog) -> list[Prompt]:
    """The session's prompts a rewind can take back, oldest first, with what each changed."""
    prompts = [Prompt(PromptKey(i, float(m["ts"])), _words(m)) for i, m in enumerate(history.messages)
               if m.get("role") == "user" and isinstance(m.get("ts"), (int, float))
               and not set_aside(m) and not history.is_rewound(i) and not is_rewind(m)]
    by_ts = {p.key.ts: p for p in prompts}
    for record in log.records():
        prompt = by_ts.get(record.get("p"))
        if prompt is None:
            continue
        if record["k"] == "file" and record["path"] not in prompt.files:
            prompt.files.append(record["path"])
        elif record["k"] == "shell":
            prompt.commands.append(str(record.get("command", "")))
    return prompts


def plan_rewind(history: History, log: CheckpointLog, count: int) -> RewindPlan:
    """What taking back the last ``count`` prompts would do (raises UsageError when there are fewer)."""
    prompts = recent_prompts(history, log)
    if count < 1:
        raise UsageError("rewind takes back at least 1 prompt")
    if count > len(prompts):
        have = f"only {len(prompts)}" if prompts else "none"
        raise UsageError(f"cannot rewind {count} prompt{'s' if count > 1 else ''}: this session has {have} to take back")
    chosen = prompts[-count:]
    wanted = {p.key.ts for p in chosen}
    files: dict[str, FileChange] = {}
    memory: list[dict[str, Any]] = []
    for record in log.records():
        if record.get("p") not in wanted:
            continue
        kind = record["k"]
        if kind == "file" and record["path"] not in files:  # the earliest prompt's copy is the one restored
            path = record["path"]
            files[path] = FileChange(Path(path), bool(record.get("existed")), record.get("before"),
                                     str(record.get("why", "")), left=record.get("before"), mode=record.get("mode"))
        elif kind == "after" and record["path"] in files:
            files[record["path"]].left = record.get("sha")
        elif kind == "memory":
            memory.append(record)
    for change in files.values():
        if change.existed and change.before is None and change.left is None:
            change.left = change.current()  # not kept: nothing to compare, nothing restored
    commands = [c for p in chosen for c in p.commands]
    return RewindPlan(chosen, list(files.values()), commands, memory)


def apply_rewind(plan: RewindPlan, history: History, log: CheckpointLog, keep: set[Path] = frozenset()) -> list[str]:
    """Restore the plan's files (but those in ``keep``: the user's changes stay), take its
    exchanges out of what the model is sent, and record it. The lines saying what was done."""
    lines = []
    for change in plan.files:
        name = str(change.path)
        if change.path in keep:
            lines.append(f"kept your version of {name} (not restored)")
        elif not change.restorable:
            lines.append(f"not restored: {name} ({change.why})")
        elif not change.existed:
            if change.path.exists():
                change.path.unlink()
                lines.append(f"removed {name} (the rewound prompt created it)")
        else:
            assert change.before is not None
            replace_file(change.path, log.blob(change.before), mode=change.mode)
            lines.append(f"restored {name}")
    first = plan.prompts[0].key
    history.add_rewound(_index_of(history, first), {"prompts": len(plan.prompts)})
    log.rewound([{"p": p.key.ts, "text": p.text} for p in plan.prompts])
    count = len(plan.prompts)
    lines.insert(0, f"rewound {count} prompt{'s' if count > 1 else ''}: the model no longer sees "
                    f"{'them' if count > 1 else 'it'} (tmg -t still shows {'them' if count > 1 else 'it'}, marked)")
    if plan.commands:
        lines.append("shell commands ran and cannot be undone: " + ", ".join(f"`{c}`" for c in plan.commands))
    return lines


def kept_memory_ids(plan: RewindPlan, log: CheckpointLog) -> set[str]:
    """The memory ids recorded by prompts the rewind keeps (their writes are not retracted)."""
    records = log.records()
    gone = {p.key.ts for p in plan.prompts}
    gone |= {p.get("p") for r in records if r["k"] == "rewound" for p in r["prompts"]}  # rewound before
    return {str(r.get("id")) for r in records if r["k"] == "memory" and r.get("p") not in gone}


def _index_of(history: History, key: PromptKey) -> int:
    if key.at < len(history.messages) and history.messages[key.at].get("ts") == key.ts:
        return key.at
    return next(i for i, m in enumerate(history.messages) if m.get("ts") == key.ts)


def _words(message: dict[str, Any]) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else " ".join(
        p.get("text", "") for p in content or [] if isinstance(p, dict))
    text = " ".join(text.split())
    return text if len(text) <= _TEXT else text[:_TEXT - 1] + "…"
