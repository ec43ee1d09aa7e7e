"""Hot reload: keep a LiveConfig in step with its file, never leaving the session on a broken one.

Two ways a change is noticed, both ending in :meth:`ConfigWatcher.reload` (serialised by a
lock, and installing with one atomic swap, so reloads never race each other or the engine).
A reload reads only a regular file, bounded (:mod:`tmg.config.source`), so it never blocks; and
the event loop never waits for the lock: while the thread reloads, a boundary goes on with the
current config. A save that leaves nothing to chat with (an empty or comment-only file, no
usable provider) is a bad save like a syntax error: the last good config stays. A file emptied
less than two seconds ago is a save in its middle (truncated, not yet written), not a bad one.

- a daemon thread runs ``watchfiles.watch`` on the file's FOLDER (editors save by writing a new
  file and renaming it over the old one) and reloads right there, off the event loop: reading,
  parsing and validating never stall a streaming answer; only its reports are posted to the loop;
- :meth:`ConfigWatcher.current`, the engine's ``config`` callable, compares the file's
  (mtime, size, inode, type) at every phase boundary, so a change is seen at the next boundary even
  when the thread is not running or has not woken yet. ``os.stat`` costs about a microsecond.

Reports go through one callback ``report(level, text)`` with level ``notice``, ``warn`` or
``debug``; the composition root sends them to stderr and the transcript.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import time
from pathlib import Path
from typing import Callable, Mapping

from tmg.config.discovery import user_config_file
from tmg.config.live import LiveConfig
from tmg.config.loader import parse_config
from tmg.config.model import Config
from tmg.config.reload import describe_changes, merge_fixed
from tmg.config.source import decode_config, parse_yaml, read_config_bytes
from tmg.errors import ConfigError

Report = Callable[[str, str], None]
Signature = tuple[int, int, int, int] | None  # (mtime_ns, size, inode, file type)

# watchfiles knobs (dependencies.md): a save is seen in tens of ms; `debounce` bounds how long
# a burst of writes (truncate, write, chmod) is gathered into one reload.
_DEBOUNCE_MS = 400
_STEP_MS = 50
_STABLE_READS = 3  # re-read when the file changed while being read, at most this often
# How long an emptied file is taken for a save in its middle (truncated, its write to come). Far
# longer than a debounce: on a loaded machine the saving process can stall between the two (CI saw
# a test's own truncate-then-write take over 400 ms), and an empty file refused is said, then the
# same broken text written after it is said again. A file left empty keeps the last good config
# either way; saying so two seconds late costs nothing.
_EMPTY_GRACE_MS = 2000


def _mid_save(signature: Signature) -> bool:
    """Gone, or emptied a moment ago: what a file looks like in the middle of being saved."""
    return signature is None or (signature[1] == 0 and signature[3] == stat.S_IFREG
                                 and time.time_ns() - signature[0] < _EMPTY_GRACE_MS * 1_000_000)


def _signature(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, stat.S_IFMT(st.st_mode))


class ConfigWatcher:
    """Owns a LiveConfig's reloads: parse and validate off the hot path, swap atomically.

    Args:
        live: the live config; its current config is the session's (fixed keys come from it).
        env: the environment ``${VAR}`` and ``TMG_*`` overrides are read from (as at start).
        report: ``report(level, text)`` for what the user must hear (each thing once).
        on_swap: called with each newly installed config (e.g. to learn new secrets).
        usable: raises ConfigError when a config leaves the session nothing to talk to (the
            provider choice); such a save is refused like an invalid one.
    """

    def __init__(self, live: LiveConfig, env: Mapping[str, str], report: Report,
                 on_swap: Callable[[Config], None] = lambda _c: None,
                 warnings: list[str] | tuple[str, ...] = (),
                 usable: Callable[[Config], object] = lambda _c: None) -> None:
        self.live = live
        self._session = live.get()
        source = self._session.source
        self.path: Path | None = Path(os.path.abspath(source)) if source is not None else None
        self._env = env
        self._report = report
        self._on_swap = on_swap
        self._usable = usable
        self._signature = _signature(self.path) if self.path else None
        # A project's tmg.yaml carries the user's own PERMISSIONS beside it (tmg.config.loader):
        # a change to the user's file reloads too, so a new deny rule holds at the next call.
        self.user_path: Path | None = (user_config_file(env) if self.path is not None and self._session.trust is not None
                                       else None)
        self._user_signature = _signature(self.user_path) if self.user_path else None
        self._last_error: str | None = None
        self._pending_restart: set[str] = set()
        self._warned = set(warnings)
        self._gone_reported = False
        self._lock = threading.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.watching = False  # True while the watchfiles thread is up
        self.reloads = 0  # configs installed by reload (for tests and /config)

    # -- the engine's view -------------------------------------------------------------------

    def current(self) -> Config:
        """The config to use from this phase boundary on (a cheap file check first)."""
        self.check()
        return self.live.get()

    def check(self) -> bool:
        """Reload when the file's (mtime, size, inode, type) changed since the last look (or the
        user's, for a project's file)."""
        if self.path is None:
            return False
        now = self._signatures()
        if now == (self._signature, self._user_signature):
            return False
        if self._changed_mid_save(now):
            # Gone, or just emptied: most likely the middle of a save. The watcher thread (after
            # its debounce) or a later boundary settles it; an empty file left empty is a bad save.
            return False
        return self.reload(wait=False)

    def _signatures(self) -> tuple[Signature, Signature]:
        assert self.path is not None
        return _signature(self.path), (_signature(self.user_path) if self.user_path is not None else None)

    def _changed_mid_save(self, now: tuple[Signature, Signature]) -> bool:
        """Whether a file that changed since the last read looks caught in the middle of a save."""
        return any(_mid_save(sig) for sig, was in zip(now, (self._signature, self._user_signature)) if sig != was)

    # -- reloading ---------------------------------------------------------------------------

    def reload(self, settled: bool = False, report: Report | None = None, wait: bool = True) -> bool:
        """Read, validate and install the file. Returns True when a new config was installed.

        ``settled`` says the change burst is over (the watcher's debounce): only then is a
        missing file reported, since editors delete and recreate files while saving.
        ``report`` replaces the report callback (the watcher thread posts to the loop).
        ``wait=False`` (the event loop) returns at once when another reload holds the lock.
        """
        if self.path is None or self._stop.is_set():
            return False
        say = report or self._report
        if not self._lock.acquire(blocking=wait):
            return False  # the watcher thread is reloading: it installs the change
        try:
            user_signature = _signature(self.user_path) if self.user_path is not None else None
            try:
                text, signature = self._read_stable()
            except ConfigError as exc:  # a FIFO, a directory, unreadable, too big, not UTF-8
                self._signature, self._user_signature = _signature(self.path), user_signature
                return self._refuse(str(exc), say)
            if text is None:
                if settled and not self._gone_reported:
                    self._gone_reported = True
                    say("warn", f"config file {self.path} is gone; keeping the current config")
                return False
            self._gone_reported = False
            if _mid_save(signature):
                # Read between a save's truncate and its write (the thread too: it may wake on the
                # previous save). That truncate's own event, or a later boundary, reads it again.
                return False
            if settled and (signature, user_signature) == (self._signature, self._user_signature):
                return False  # an event for a write already read at a phase boundary
            self._signature, self._user_signature = signature, user_signature
            try:
                raw = parse_yaml(text, self.path)
                if raw is None:  # a truncated save, or everything commented out
                    raise ConfigError(f"config file {self.path} is empty (no settings, at most comments); "
                                      "save the full config")
                new, warnings = parse_config(raw, self._env, self.path, text,
                                             trust=self._session.trust)  # decided once, at start
                merged, waiting = merge_fixed(self._session, new)
                try:
                    self._usable(merged)
                except ConfigError as exc:
                    raise ConfigError(f"config file {self.path} leaves no usable provider: {exc}") from None
            except ConfigError as exc:
                return self._refuse(str(exc), say)
            return self._install(merged, waiting, warnings, say)
        finally:
            self._lock.release()

    def _refuse(self, message: str, say: Report) -> bool:
        """Keep the last good config; say why once (until the file changes what is wrong)."""
        if message != self._last_error:
            self._last_error = message
            say("warn", f"config reload failed, keeping the previous config: {message}")
        return False

    def _read_stable(self) -> tuple[str | None, Signature]:
        """The file's text and signature; (None, None) when it is gone (mid-save, or deleted).

        Raises:
            ConfigError: not a regular file, unreadable, too big or not UTF-8 (never blocks).
        """
        assert self.path is not None
        text, after = None, None
        for _ in range(_STABLE_READS):
            before = _signature(self.path)
            if before is None:
                return None, None
            try:
                data = read_config_bytes(self.path)
            except ConfigError:
                if _signature(self.path) is None:
                    return None, None  # deleted between the stat and the open
                raise
            after = _signature(self.path)
            text = decode_config(data, self.path)
            if before == after:
                return text, after
        return text, after

    def _install(self, merged: Config, waiting: list[str], warnings: list[str], say: Report) -> bool:
        waiting = [p for p in waiting if p not in self.live.overrides]
        old = self.live.swap(merged)
        installed = self.live.get()
        changes = describe_changes(old, installed)
        self.reloads += 1
        self._on_swap(installed)
        for path in waiting:
            if path not in self._pending_restart:
                say("warn", f"{path} changed in {self.path}; restart tmg to apply it")
        self._pending_restart = set(waiting)
        for warning in warnings:
            if warning not in self._warned:
                say("warn", f"{self.path}: {warning}")
        self._warned = set(warnings)
        recovered, self._last_error = self._last_error is not None, None
        if changes:
            say("notice", f"config reloaded from {self.path}: {', '.join(changes)}")
        elif recovered:
            say("notice", f"config file {self.path} is valid again; using it")
        return True

    # -- the watcher thread ------------------------------------------------------------------

    def start(self) -> None:
        """Start watching; call from the event loop that runs the session. Safe to call twice."""
        if self.path is None or self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._watch, name="tmg-config-watcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching. Returns at once: the daemon thread notices within a step and ends."""
        self._stop.set()
        self.watching = False

    def _watch(self) -> None:
        assert self.path is not None and self._loop is not None
        try:
            import watchfiles  # imported here, off the loop: -t/--help and one-shot starts never wait on it

            watched = [self.path] + ([self.user_path] if self.user_path is not None else [])
            names = {n for p in watched for n in (str(p), os.path.realpath(p))}
            folders = sorted({os.path.dirname(n) for n in names})
            self.watching = not self._stop.is_set()
            self._loop.call_soon_threadsafe(self.check)  # a save while watchfiles was imported
            for _changes in watchfiles.watch(
                *folders, watch_filter=lambda _c, p: p in names, debounce=_DEBOUNCE_MS, step=_STEP_MS,
                stop_event=self._stop, recursive=False, raise_interrupt=False,
            ):
                self._settle()
                self.reload(True, report=self._post)
        except RuntimeError:
            pass  # the loop closed under us: the session is over
        except Exception as exc:  # noqa: BLE001 - no watcher is fine: phase boundaries still check
            self._post("debug", f"config watcher stopped ({type(exc).__name__}: {exc}); "
                                "changes are still picked up at the next prompt or tool call")
        finally:
            self.watching = False

    def _settle(self) -> None:
        """Wait out a save caught in its middle (gone, or emptied a moment ago), for at most the
        empty grace: on a loaded machine a truncate can wake the thread a quiet step before its
        write, and that empty file is not a broken save. One left empty is refused once it is older."""
        assert self.path is not None
        deadline = time.monotonic() + _EMPTY_GRACE_MS / 1000
        while (self._changed_mid_save(self._signatures()) and time.monotonic() < deadline
               and not self._stop.wait(_STEP_MS / 1000)):
            pass

    def _post(self, level: str, text: str) -> None:
        try:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._report, level, text)
        except RuntimeError:
            pass
