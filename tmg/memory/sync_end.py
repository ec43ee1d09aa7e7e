"""The memory sync at a session's end (MEMORY.SYNC, WHEN session-end): never on a prompt's path.

After the flush, the session's end asks the memory broker to run `plur_sync` once this process
has gone (`tmg/detach`): the user waits for no git, a one-shot exits as fast as without sync, and
the broker writes PLUR's answer to the store's sync record (`tmg.memory.sync_record`). It syncs
when the session wrote to memory (to push it), and else at most every PULL_EVERY_S (to pull the
other machines'; a failed sync is retried so too). The sync runs on a PLUR server of its own in
the broker, with the user's ssh agent and a git that never prompts (`sync_git.git_env`).

What went wrong is said here, once (on stderr and in the transcript): the last sync's failure,
read from the record the broker wrote after an earlier session (its reason, and what was kept),
and a MEMORY.SYNC.REMOTE this store does not sync with yet (`tmg memory sync` sets it up:
joining a remote another machine filled is not done behind the user's back). The same failure
is not said again while later retries fail the same way.

Without the broker (TMG_MEMORY_BROKER=0) nothing runs after the process, so nothing is synced at
the end: `--debug` says so, `tmg memory sync` syncs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from tmg.config.model import Config
from tmg.memory.health import WriteReport
from tmg.memory.runtime import ClientSource


class EndSync:
    """The session end's sync step for one store (nothing of sync is loaded until it is on)."""

    def __init__(self, *, config: Callable[[], Config], clients: ClientSource, report: WriteReport, store: Path,
                 home: Path, debug: Callable[[str], None] = lambda _m: None) -> None:
        self._config = config
        self._clients = clients
        self._report = report
        self._store = store
        self._home = home
        self._debug = debug

    async def run(self, notify: Callable[[str], None]) -> bool | None:
        """Tell what went wrong, then detach a sync if one is due. True: the broker took it;
        False: none was due or one still runs; None: not synced (off, not set up, no broker)."""
        memory = self._config().memory
        sync = memory.sync
        if not memory.enabled or not sync.automatic:
            return None
        from tmg.memory import payloads
        from tmg.memory.sync import read_answer, shown
        from tmg.memory.sync_git import git_env, tracks
        from tmg.memory.sync_record import BY_SESSION_END, due, read_record, record_path, tell

        self._record_at = record_path(self._home, self._store)
        record = read_record(self._record_at)
        if not tracks(self._store, sync.remote):
            self._tell(notify, "not set up", f"memory: MEMORY.SYNC.REMOTE is {shown(sync.remote)}, but this store "
                                             "does not sync with it yet: run `tmg memory sync` once to set it up")
            return None
        if record is not None:
            answer = read_answer(record.is_error, record.text)
            if answer.ok:
                tell(self._record_at, None)
            else:
                when = time.strftime("%H:%M", time.localtime(record.at))
                reason = shown(answer.error or "no reason given")
                self._tell(notify, reason, f"memory: the last sync ({when}, by {record.by}) failed ({reason}); "
                                           f"{answer.kept}; a later session's end retries it (`tmg memory sync` "
                                           "now)")
        if not due(record, self._report.wrote):
            return False
        client = await self._clients.client(0.0)  # a server that is not up is not started for a sync
        if client is None:
            return None
        taken = await client.detach("plur_sync", payloads.sync_payload(None, sync.type), self._record_at,
                                    BY_SESSION_END, git_env(os.environ))
        if taken is None:
            self._debug("memory: no sync at the session end: it runs in the memory broker, which this run "
                        "does not use (`tmg memory sync` syncs now)")
        return taken

    def _tell(self, notify: Callable[[str], None], reason: str, line: str) -> None:
        """Say `line` unless `reason` was the last thing said about this store's sync."""
        from tmg.memory.sync_record import tell, told

        if told(self._record_at) != reason:
            notify(line)
            tell(self._record_at, reason)
