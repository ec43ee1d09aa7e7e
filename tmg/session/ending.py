"""The single session end: one ordered list of steps, run exactly once however the session ends.

Memory plugs its flush and write-failure notice in here (`add`: steps run in the order added);
what a session holds is released here, after every step (`add_resource`: as each is made, so that
a session that fails to open releases what it had; the last made is released first). A failing
step is reported and the next step still runs. The end is shielded: a cancellation that arrives while
it runs (a second Ctrl-C, SIGTERM, `/new` torn down) does not stop it; every step still runs, and
the cancellation is passed on once the end is over. A step that raises anything at all -- even a
cancellation or KeyboardInterrupt from inside it -- is reported and the next step still runs.

`hurry()` (a signal that arrives while the end runs) cuts the steps added as `hurriable` short: the one running is
cancelled and those after it are cancelled at their first wait. Only steps that have already
made their work durable before waiting are hurriable (memory's drain and flush: the batch is
on disk before it is sent); closing files and releasing the lock always run in full.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable


class SessionEnd:
    def __init__(self, report: Callable[[str], None] = lambda _m: None) -> None:
        self._steps: list[tuple[str, Callable[[], Any], bool]] = []
        self._resources: list[tuple[str, Callable[[], Any], bool]] = []  # released after the steps, last first
        self._report = report
        self.ran = False
        self.finished = False  # every step has had its turn
        self.hurried = False
        self._current: asyncio.Future[Any] | None = None  # the hurriable step running now

    def add(self, name: str, step: Callable[[], Any], hurriable: bool = False) -> None:
        """Register a step (sync or async). Steps run in the order they were added."""
        self._steps.append((name, step, hurriable))

    def add_resource(self, name: str, release: Callable[[], Any]) -> None:
        """Register what releases a resource just made (a lock, a file, servers started for this
        session): run after every step, in reverse order of registration, never cut short."""
        self._resources.append((name, release, False))

    def hurry(self) -> None:
        """Cut the hurriable steps short (idempotent; a no-op before the end or after it)."""
        if self.hurried or not self.ran or self.finished:
            return
        self.hurried = True
        if self._current is not None:
            self._current.cancel()

    async def run(self) -> None:
        if self.ran:
            return
        self.ran = True
        steps = asyncio.ensure_future(self._run_steps())
        cancelled = False
        while not steps.done():
            try:
                await asyncio.shield(steps)
            except asyncio.CancelledError:
                # Someone gave up on us mid-end: finish anyway, then pass the cancellation on.
                cancelled = True
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()
        raised = steps.result()
        if raised is not None:
            raise raised
        if cancelled:
            raise asyncio.CancelledError()

    async def _run_steps(self) -> BaseException | None:
        """Run every step; returns a KeyboardInterrupt/SystemExit seen in one, for after the end."""
        held: BaseException | None = None
        for name, step, hurriable in [*self._steps, *reversed(self._resources)]:
            try:
                result = step()
                if inspect.isawaitable(result):
                    if hurriable:
                        await self._hurriable(result)
                    else:
                        await result
            except BaseException as exc:  # the remaining steps (spool, files, locks) must still run
                if isinstance(exc, asyncio.CancelledError):
                    current = asyncio.current_task()
                    if current is not None and current.cancelling():
                        current.uncancel()
                    message = "was cut short" if self.hurried else "was interrupted"
                else:
                    if not isinstance(exc, Exception) and held is None:
                        held = exc
                    message = f"failed: {str(exc) or type(exc).__name__}"
                try:
                    self._report(f"while ending the session, {name} {message}")
                except (OSError, ValueError):
                    pass  # the terminal is gone (SIGHUP): the report cannot be shown, go on
        self.finished = True
        return held

    async def _hurriable(self, awaitable: Any) -> None:
        task = asyncio.ensure_future(awaitable)
        self._current = task
        if self.hurried:  # let it run up to its first wait (its durable part), then cut it
            asyncio.get_running_loop().call_soon(task.cancel)
        try:
            await task
        finally:
            self._current = None
