"""Forgetting one episode: PLUR 0.20.0 can add episodes (`plur_capture`) and list them
(`plur_timeline`), but no tool of it deletes or retires one. An episode may hold what a user
wants gone (an answer that quoted a secret the scrubber missed), so tmg removes it from PLUR's own
file, `<storage_root>/episodes.yaml`, the way PLUR itself writes that file:

- under PLUR's own lock: `episodes.yaml.lock` (`tmg.memory.plur_lock`);
- the file is edited as text: only the lines of that one episode go, every other byte stays
  as PLUR wrote it; the result is parsed and must equal the old list without that episode, or
  nothing is written;
- written atomically (a temp file beside it, fsync, rename), keeping the file's mode.

PLUR reads episodes.yaml afresh on every call (no cache), so a running server (the broker's)
sees the change at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tmg.memory.plur_lock import LOCK_WAIT_S, StoreBusy
from tmg.memory.plur_lock import plur_lock as _plur_lock

EPISODES_FILE = "episodes.yaml"
# A top-level item of the list PLUR dumps: `- id: EP-...` at column 0; its other lines are indented.
_ITEM_START = re.compile(r"^-(?: |$)", re.MULTILINE)


class EpisodeError(Exception):
    """The episode could not be forgotten; the message says why, for the user."""


def forget_episode(storage_root: Path, episode_id: str, wait: float = LOCK_WAIT_S) -> str:
    """Remove episode `episode_id` from the store at `storage_root`; returns its summary.

    Raises:
        EpisodeError: no such file or episode, the lock stayed held, or the file is not as PLUR
            writes it (then it is left untouched).
    """
    path = storage_root / EPISODES_FILE
    if not path.is_file():
        raise EpisodeError(f"this memory server keeps no {EPISODES_FILE} in {storage_root}")
    with plur_lock(path, wait):
        text = path.read_text(encoding="utf-8")
        kept, removed = _without(text, episode_id)
        if removed is None:
            raise EpisodeError(f"no episode {episode_id}")
        _check(text, kept, episode_id)
        _replace(path, kept)
    return str(removed.get("summary", ""))


def _load(text: str) -> list[Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(text, Loader=loader) if text.strip() else []  # noqa: S506 - a safe loader
    if not isinstance(data, list):
        raise EpisodeError(f"{EPISODES_FILE} is not a list as PLUR writes it; left as it is")
    return data


def _without(text: str, episode_id: str) -> tuple[str, dict[str, Any] | None]:
    """`text` without the item of `episode_id` (the text is unchanged when there is none)."""
    starts = [m.start() for m in _ITEM_START.finditer(text)]
    head = text[: starts[0]] if starts else text
    items = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    pattern = re.compile(rf"^(?:- |  )id: ['\"]?{re.escape(episode_id)}['\"]?\s*$", re.MULTILINE)
    for index, item in enumerate(items):
        if pattern.search(item):
            parsed = _load(item)
            if len(parsed) == 1 and isinstance(parsed[0], dict) and parsed[0].get("id") == episode_id:
                rest = items[:index] + items[index + 1:]
                return head + "".join(rest) if rest or head.strip() else "[]\n", parsed[0]
    return text, None


def _check(old: str, new: str, episode_id: str) -> None:
    """The new text must read as the old list without that one episode: else nothing is written."""
    before = _load(old)
    expected = [e for e in before if not (isinstance(e, dict) and e.get("id") == episode_id)]
    if len(expected) != len(before) - 1 or _load(new) != expected:
        raise EpisodeError(f"{EPISODES_FILE} is not laid out as PLUR writes it; left as it is")


def _replace(path: Path, text: str) -> None:
    mode = path.stat().st_mode & 0o777
    tmp = path.with_name(f"{path.name}.tmg-{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def plur_lock(path: Path, wait: float = LOCK_WAIT_S) -> Iterator[None]:
    """PLUR's own lock on `path` for a block; EpisodeError when another process held it for `wait`."""
    try:
        with _plur_lock(path, wait):
            yield
    except StoreBusy as exc:
        raise EpisodeError(str(exc)) from None
