"""`tmg memory sync` and what `tmg memory status` says about sync: the store kept in a git
remote by PLUR's own `plur_sync` (docs/memory-sync.md).

tmg builds no sync of its own: PLUR commits, pulls (conflicts are its to resolve: what it
reports is shown as it says it) and pushes, with `remote_type` choosing what may leave
(`personal`: everything but scope `local`; `shared`: only shared-scope engrams not marked
private). tmg mends the two cases PLUR 0.20.0 gets wrong (`tmg.memory.sync_git`: joining a remote
another machine already filled, and a first push that failed), adds back this machine's engrams
after a join through `plur_learn_batch`, and keeps the record of the last sync
(`tmg.memory.sync_record`).

A sync that fails is one line saying why and what was kept: PLUR commits before it pushes, so
a push to a remote that is gone leaves the commit here, and the next sync pushes it.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, NamedTuple

from tmg.memory import payloads
from tmg.memory.client import CallResult, PlurClient
from tmg.memory.manage import Outcome
from tmg.memory.results import ResultError, parse_learn_batch
from tmg.memory.sync_record import BY_COMMAND, SyncRecord, read_record, tell, write_record
from tmg.redaction import mask_url_passwords

# A sync talks to a git remote (fetch, pull, push): far past a memory call's usual bound.
SYNC_TIMEOUT_S = 120.0
_RELEARN_CHUNK = 50
_IDENTITY = ("Please tell me who you are", "Author identity unknown", "unable to auto-detect email address")


class SyncAnswer(NamedTuple):
    """What one plur_sync answered: whether it synced, PLUR's own words, and why not."""

    ok: bool
    lines: tuple[str, ...]
    error: str | None = None
    kept: str = "your memory here is unchanged"  # what a failure left, for its one line


class SyncState(NamedTuple):
    """plur_sync_status: the store's repository and how it stands against its remote."""

    initialized: bool
    remote: str | None
    branch: str | None
    dirty: bool
    ahead: int
    behind: int


def parse_sync_status(data: Any) -> SyncState:
    if not isinstance(data, dict) or not isinstance(data.get("initialized"), bool):
        raise ResultError("plur_sync_status: expected {initialized, remote, dirty, ahead, behind}")
    return SyncState(data["initialized"], data.get("remote") or None, data.get("branch") or None,
                     bool(data.get("dirty")), int(data.get("ahead") or 0), int(data.get("behind") or 0))


def read_answer(is_error: bool, text: str) -> SyncAnswer:
    """PLUR's answer to plur_sync (or a record of one) as tmg tells it. A push that failed and a
    pull that did not happen are failed syncs, though PLUR answers them without isError."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if is_error or not isinstance(data, dict):
        error = data.get("error") if isinstance(data, dict) else None
        return SyncAnswer(False, (), explain(str(error or text)))
    message = str(data.get("message") or data.get("action") or "synced")
    lines = [message] + [str(data[key]) for key in ("warning", "outbox_warning") if data.get(key)]
    outbox = data.get("outbox")
    if isinstance(outbox, dict) and (outbox.get("flushed") or outbox.get("pending")):
        lines.append(f"team writes queued while their store was unreachable: {outbox.get('flushed', 0)} sent, "
                     f"{outbox.get('pending', 0)} still queued (plur_outbox)")
    if data.get("push_error"):
        return SyncAnswer(False, tuple(lines), f"the push failed: {explain(str(data['push_error']))}",
                          "your memory is committed here and the next sync pushes it")
    if "NOT pulled" in message:
        return SyncAnswer(False, tuple(lines), message, "your memory here is unchanged")
    return SyncAnswer(True, tuple(lines))


def explain(error: str) -> str:
    """One line out of a git failure PLUR passes on ("Command failed: git push ...\\n...")."""
    from tmg.memory.sync_git import telling_line

    if any(mark in error for mark in _IDENTITY):
        return "git does not know who commits here: set `git config --global user.name` and `user.email`"
    text = error.strip()
    if text.startswith("Command failed:"):
        command, _, rest = text.partition("\n")
        return telling_line(rest) or command
    return " ".join(text.split())


def shown(text: str) -> str:
    return mask_url_passwords(text)


async def sync_status(client: PlurClient) -> CallResult[SyncState]:
    return await client.call("plur_sync_status", {}, parse_sync_status, timeout=SYNC_TIMEOUT_S)


async def _plur_sync(client: PlurClient, remote: str | None, remote_type: str) -> tuple[bool, str]:
    """One plur_sync: (is_error, the answer's text). A call that never answered is an error too."""
    done = await client.call("plur_sync", payloads.sync_payload(remote, remote_type), _text, timeout=SYNC_TIMEOUT_S)
    if done.ok and done.value is not None:
        return False, done.value
    error = done.server_error.message if done.server_error is not None else (done.error or "no answer")
    return True, json.dumps({"error": error.removeprefix("plur_sync: ")})


def _text(data: Any) -> str:
    return json.dumps(data)


async def sync_memory(client: PlurClient, store: Path, record_at: Path, remote: str = "",
                      remote_type: str = "personal") -> Outcome:
    """Sync the store at `store` with `remote` (empty: the one it syncs with), set it up first
    when need be; record the outcome at `record_at`."""
    state = await sync_status(client)
    if not state.ok or state.value is None:
        return Outcome((f"memory: could not read the sync state ({state.error})",), False)
    current = state.value
    if remote and current.remote and current.remote != remote:
        return Outcome((f"memory: this store already syncs with {shown(current.remote)}; to change it: "
                        f"git -C {store} remote set-url origin {shown(remote)}",), False)
    url = remote or current.remote
    if not url:
        return Outcome(("memory: no sync remote: give one (`tmg memory sync --remote URL`, a private git "
                        "repository) or set MEMORY.SYNC.REMOTE",), False)
    notes: list[str] = []
    is_error, text = await _set_up_and_sync(client, store, url, current, remote_type, notes)
    answer = read_answer(is_error, text)
    if answer.ok:
        from tmg.memory.sync_git import ensure_ignored

        if await asyncio.to_thread(ensure_ignored, store):  # commit tmg's .gitignore block now
            is_error, text = await _plur_sync(client, None, remote_type)
            answer = read_answer(is_error, text)
    write_record(record_at, SyncRecord(time.time(), BY_COMMAND, not answer.ok, text))
    if not answer.ok:
        return Outcome((failure_line(url, answer),), False)
    tell(record_at, None)  # a later failure is said again, whatever it is
    lines = [f"synced with {shown(url)} ({remote_type}): {shown(answer.lines[0])}"]
    return Outcome(tuple(lines + [shown(line) for line in answer.lines[1:]] + notes))


def failure_line(url: str, answer: SyncAnswer) -> str:
    return f"memory: sync with {shown(url)} failed ({shown(answer.error or 'no reason given')}); {answer.kept}"


async def _set_up_and_sync(client: PlurClient, store: Path, url: str, current: SyncState, remote_type: str,
                           notes: list[str]) -> tuple[bool, str]:
    """plur_sync, after setting the store up when it tracks no remote branch yet."""
    from tmg.memory import sync_git

    try:  # reached first, outside PLUR's lock: PLUR holds it through its fetch and push
        branch = await asyncio.to_thread(sync_git.remote_branch, store, url)
    except sync_git.GitError as exc:
        return True, json.dumps({"error": f"the remote cannot be reached: {exc}"})
    if current.initialized and await asyncio.to_thread(sync_git.upstream, store):
        return await _plur_sync(client, None, remote_type)
    if branch is None:  # an empty remote: PLUR's own first push (with an upstream)
        if current.remote:
            await asyncio.to_thread(sync_git.forget_remote, store)
        return await _plur_sync(client, url, remote_type)
    try:
        joined = await asyncio.to_thread(_join_locked, store, url, branch)
    except (sync_git.GitError, OSError) as exc:
        return True, json.dumps({"error": f"could not join the remote's memory: {exc}"})
    is_error, text = await _plur_sync(client, None, remote_type)  # PLUR reads the joined files
    if is_error or joined.backup is None:
        return is_error, text
    added, refused = await _add_back(client, joined.backup / "engrams.yaml")
    if added or refused:
        notes.append(f"joined the memory already in {shown(url)}: {added} engram(s) of this machine added to it"
                     + (f", {refused} refused by the server" if refused else "")
                     + f"; this machine's earlier store files are kept in {joined.backup}")
    else:
        notes.append(f"joined the memory already in {shown(url)} (this machine's earlier store files are kept "
                     f"in {joined.backup})")
    return await _plur_sync(client, None, remote_type) if added else (is_error, text)


def _join_locked(store: Path, url: str, branch: str) -> Any:
    from tmg.memory.plur_lock import plur_lock
    from tmg.memory.sync_git import join

    with plur_lock(store / "engrams.yaml", wait=10.0):
        return join(store, url, branch)


async def _add_back(client: PlurClient, engrams_file: Path) -> tuple[int, int]:
    """This machine's engrams (from the store file a join set aside) learned again through PLUR:
    (added, refused). An exact duplicate of one the remote has is PLUR's to merge."""
    records = await asyncio.to_thread(_records, engrams_file)
    items = [item for item in map(payloads.relearn_item, records) if item is not None]
    added = refused = 0
    for start in range(0, len(items), _RELEARN_CHUNK):
        chunk = items[start:start + _RELEARN_CHUNK]
        done = await client.call("plur_learn_batch", {"engrams": chunk, "max_llm_calls": 0}, parse_learn_batch,
                                 timeout=SYNC_TIMEOUT_S)
        if done.ok and done.value is not None:
            added += sum(1 for i in done.value.ids if i)
            refused += sum(1 for i in done.value.ids if not i)
        else:
            refused += len(chunk)
    return added, refused


def _records(path: Path) -> list[dict[str, Any]]:
    import yaml

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError):
        return []
    rows = data.get("engrams") if isinstance(data, dict) else data
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def last_sync_line(record: SyncRecord | None, now: float | None = None) -> str:
    """`last sync: ...` for `tmg memory status`."""
    if record is None:
        return "last sync: none yet"
    answer = read_answer(record.is_error, record.text)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(record.at))
    ago = _ago((time.time() if now is None else now) - record.at)
    if answer.ok:
        return f"last sync: {when} ({ago} ago, by {record.by}): {shown(answer.lines[0])}"
    return f"last sync: FAILED {when} ({ago} ago, by {record.by}): {shown(answer.error or '')}; {answer.kept}"


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h" if seconds < 172800 else f"{seconds // 86400} days"


def status_lines(state: CallResult[SyncState] | None, record_at: Path, config: Any) -> list[str]:
    """The sync lines of `tmg memory status` (`state` None: the store is not a repository;
    `config`: MEMORY.SYNC)."""
    record = read_record(record_at)
    if state is None:
        return ["sync: not set up (`tmg memory sync --remote URL`; docs/memory-sync.md)"]
    if not state.ok or state.value is None:
        return [f"sync: the state could not be read ({state.error})", last_sync_line(record)]
    s = state.value
    if not s.remote:
        return ["sync: a local repository, no remote (`tmg memory sync --remote URL`)", last_sync_line(record)]
    if config.remote != s.remote:
        when = "on `tmg memory sync` only: MEMORY.SYNC.REMOTE does not name it"
    else:
        when = "at each session's end" if config.automatic else "on `tmg memory sync` only"
    changes = "changes not yet synced" if s.dirty else "no changes waiting"
    return [f"sync: {shown(s.remote)} ({config.type}, {when}; branch {s.branch or '?'})",
            f"  ahead {s.ahead} · behind {s.behind} · {changes}",
            f"  {last_sync_line(record)}"]
