"""PLUR's reads on a process that does not write, and their reinforcement landed when the store is idle.

PLUR 0.20.0 writes on every read: `plur_inject*` and `plur_recall` reinforce what they return by
rewriting the whole `engrams.yaml`, which also drops its parsed copy, so at a year of use every
prompt paid a YAML dump and the next one a YAML parse of the whole store (docs/plur-at-scale.md).
The broker runs PLUR's read process through `plur_reader.mjs` (the real server, its reads
without those writes: the parsed store stays cached until the file changes), keeps the reads it
forwarded, and replays them on PLUR's writer process once nothing has used the store for
`IDLE_S`: the same calls, in PLUR's own code, so activation, co-access and injection counts
land as they would have, only later and coalesced (a read repeated meanwhile is replayed once).

`TMG_PLUR_READER: "0"` in the memory server's ENV (MCP_SERVERS) turns this off for it: every
read then goes to PLUR as it is, writes and all.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from tmg.broker.calls import tool_name
from tmg.broker.child import Spec

SHIM = Path(__file__).with_name("plur_reader.mjs")
IDLE_S = 5.0  # no call to the store for this long: it is idle, the reads are replayed
KEPT = 64  # distinct reads kept for the replay; the oldest go first (a bound, whatever the day held)
_ENTRY = "@plur-ai/mcp/dist/index.js"
OFF_SWITCH = "TMG_PLUR_READER"
_REINFORCING = ("plur_inject", "plur_recall")
log = logging.getLogger("tmg.broker")


def reader_launch(spec: Spec) -> Spec | None:
    """How to start `spec` as a read process: PLUR's own entry run by node, through the shim; None
    for any other server (it is run as it is)."""
    if dict(spec.env).get(OFF_SWITCH) == "0":
        return None
    if spec.kind != "memory" or not spec.args or Path(spec.command).name not in ("node", "nodejs"):
        return None
    if not spec.args[0].replace("\\", "/").endswith(_ENTRY) or not SHIM.is_file():
        return None
    return replace(spec, args=(str(SHIM), *spec.args))


def reinforces(params: dict[str, Any]) -> bool:
    """A read PLUR would have reinforced what it returned for (also through the lean gateway)."""
    return tool_name(params).startswith(_REINFORCING)


class Reinforcement:
    """The reads to replay, and the timer that replays them once the store is idle."""

    def __init__(self, land: Callable[[list[dict[str, Any]]], Awaitable[None]],
                 landed: Callable[[], None] = lambda: None, idle: float = IDLE_S) -> None:
        """`land` replays reads on PLUR's writer; `landed` is told once a replay is over (the
        store's file changed: the read process is warmed)."""
        self._land = land
        self._landed = landed
        self.idle = idle
        self._calls: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._timer: asyncio.TimerHandle | None = None
        self._landing: asyncio.Task[None] | None = None
        self.replayed = 0  # calls replayed so far (status, tests)

    @property
    def kept(self) -> int:
        return len(self._calls)

    def note(self, params: dict[str, Any]) -> bool:
        """A read was forwarded to the read process: keep it (if it reinforces), and wait for idle.
        True when it was kept."""
        kept = reinforces(params)
        if kept:
            params = {k: v for k, v in params.items() if k != "_meta"}  # a progress token was its caller's
            key = json.dumps(params, sort_keys=True)
            self._calls.pop(key, None)
            self._calls[key] = params
            while len(self._calls) > KEPT:
                self._calls.popitem(last=False)
        self.touch()
        return kept

    def touch(self) -> None:
        """The store was used: the replay waits for another idle period."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._calls:
            self._timer = asyncio.get_running_loop().call_later(self.idle, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._landing is None or self._landing.done():
            self._landing = asyncio.create_task(self.flush())

    async def flush(self, whatever: bool = False) -> None:
        """Replay what is kept, one read at a time, oldest first, and stop when the store is used
        again (a call re-armed the timer): the rest waits for the next idle period, so a prompt
        shares the machine with one replayed read at most. `whatever`: all of it (the exit)."""
        before = self.replayed
        while self._calls and (whatever or self._timer is None):
            _key, params = self._calls.popitem(last=False)
            try:
                await self._land([params])
                self.replayed += 1
            except Exception as exc:  # noqa: BLE001 - a lost reinforcement costs ranking, never a prompt
                log.warning("reinforcement of a read not landed: %s", exc)
        if self.replayed > before:
            log.info("reinforcement of %d read(s) replayed (%d kept for the next idle period)",
                     self.replayed - before, len(self._calls))
            self._landed()

    async def aclose(self, bound: float) -> None:
        """The broker is exiting: land what is kept, within `bound` seconds."""
        if self._timer is not None:
            self._timer.cancel()
        landing = [t for t in (self._landing,) if t is not None and not t.done()]
        try:
            async with asyncio.timeout(bound):
                for task in landing:
                    await task
                await self.flush(whatever=True)
        except TimeoutError:
            log.warning("reinforcement still landing at exit: given up")
