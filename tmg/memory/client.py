"""`PlurClient`: every memory call bounded, routed by the tool surface, and judged honestly.

A call has failed when it raised (timeout, transport, protocol), when the result says `isError`,
when the tool is unreachable, or when the result is not the shape the tool returns. Every
failure comes back as a `CallResult` with `ok=False` and a reason: the client never raises
into a chat (fail-open), and never mistakes an error for success.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, Literal, NamedTuple, Protocol, TypeVar

from tmg.mcp.outcome import ToolOutcome
from tmg.memory import payloads, results
from tmg.memory.surface import ToolSurface, ToolUnavailable

DEFAULT_TIMEOUT_S = 3.0
T = TypeVar("T")
FailureKind = Literal["raised", "timeout", "is_error", "bad_result", "unavailable"]


class ToolCaller(Protocol):
    """What PlurClient needs from a connection (`tmg.mcp.connection.McpConnection` fits)."""

    @property
    def tool_names(self) -> frozenset[str]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = ...) -> ToolOutcome: ...


class CallResult(NamedTuple, Generic[T]):
    """One memory call's outcome: the typed value, or why it failed."""

    tool: str
    ok: bool
    value: T | None = None
    failure: FailureKind | None = None
    error: str | None = None
    server_error: results.ServerError | None = None


class PlurClient:
    """PLUR's tools as typed, bounded, fail-open calls over a ToolCaller."""

    def __init__(
        self,
        caller: ToolCaller,
        *,
        timeout: float = DEFAULT_TIMEOUT_S,
        on_result: Callable[[CallResult[Any]], None] | None = None,
    ) -> None:
        """Detect the tool surface from what the caller listed at connect time.

        Args:
            caller: a started connection.
            timeout: bound of each call, in seconds.
            on_result: told about every call (the write report counts attempts and failures).
        """
        self.caller = caller
        self.timeout = timeout
        self.surface = ToolSurface.detect(caller.tool_names)
        self.on_result = on_result
        # What a cacheable read depends on beyond the store the broker sees written: a team
        # store whose link or file changed under it (tmg.memory.team_store.Registering sets it).
        self.cache_view = ""

    async def call(self, tool: str, payload: dict[str, Any], parse: Callable[[Any], T], *,
                   timeout: float | None = None, cached: bool = False) -> CallResult[T]:
        """Route, bound and judge one call. All the public methods go through here.

        `timeout` replaces the client's bound for this call (the prompt's memory deadline
        shortens it; a sync, which talks to a git remote, lengthens it); `cached` lets a caller
        that keeps read results (the broker) answer from them."""
        outcome = await self._call(tool, payload, parse, self.timeout if timeout is None else timeout, cached)
        if self.on_result is not None:
            self.on_result(outcome)
        return outcome

    async def _call(self, tool: str, payload: dict[str, Any], parse: Callable[[Any], T], timeout: float,
                    cached: bool) -> CallResult[T]:
        try:
            name, arguments = self.surface.route(tool, payload)
        except ToolUnavailable as exc:
            return CallResult(tool, False, failure="unavailable", error=str(exc))
        extra = {"cached": self.cache_view or True} if cached and getattr(self.caller, "caches_reads", False) else {}
        try:
            # Our own bound too: a caller that ignores its timeout argument must not hang a turn.
            outcome = await asyncio.wait_for(self.caller.call_tool(name, arguments, timeout=timeout, **extra),
                                             timeout + 0.1)
        except asyncio.TimeoutError:
            return CallResult(tool, False, failure="timeout", error=f"{tool}: no answer in {timeout:g} s")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any raise is a failed call, by contract
            return CallResult(tool, False, failure="raised", error=f"{tool}: {exc}")
        if outcome.is_error:
            server_error = results.parse_error(outcome.data, outcome.text)
            return CallResult(tool, False, failure="is_error", error=f"{tool}: {server_error.message}",
                              server_error=server_error)
        try:
            value = parse(outcome.data)
        except results.ResultError as exc:
            return CallResult(tool, False, failure="bad_result", error=str(exc))
        except Exception as exc:  # noqa: BLE001 - a parser tripped on a shape it did not foresee: fail open
            return CallResult(tool, False, failure="bad_result",
                              error=f"{tool}: unreadable result ({type(exc).__name__}: {exc})")
        return CallResult(tool, True, value=value)

    async def detach(self, tool: str, payload: dict[str, Any], answer_file: Any, by: str,
                     env: dict[str, str] | None = None) -> bool | None:
        """Have the memory broker make this call after the process has gone, on a server of its
        own (`env` added to this one's), its answer written to `answer_file` (tmg.broker:
        `tmg/detach`). True: taken; False: one is still running; None: not possible here (no
        broker on this connection, or the broker did not take it)."""
        detach = getattr(self.caller, "detach", None)
        if detach is None:
            return None
        try:
            name, arguments = self.surface.route(tool, payload)
            return await detach(name, arguments, answer_file, by, env)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - fail open: the caller says it could not be detached
            return None

    async def inject(self, task: str, budget: int, scope: str = "", *,
                     timeout: float | None = None) -> CallResult[results.InjectResult]:
        """Recall for a task (callers skip an empty task: no call is made for it)."""
        payload = payloads.inject_payload(task, budget, scope)
        return await self.call("plur_inject_hybrid", payload, results.parse_inject, timeout=timeout)

    async def capture(self, summary: str, agent: str, session_id: str) -> CallResult[results.Episode]:
        payload = payloads.capture_payload(summary, agent, session_id)
        return await self.call("plur_capture", payload, results.parse_capture)

    async def learn(self, statement: str, tags: Sequence[str], scope: str = "", *, pinned: bool = False,
                    source: str | None = None) -> CallResult[str]:
        payload = payloads.learn_payload(statement, tags, scope, pinned=pinned, source=source)
        return await self.call("plur_learn", payload, results.parse_learn)

    async def learn_batch(
        self, statements: Iterable[str], tags: Sequence[str], scope: str = ""
    ) -> CallResult[results.BatchResult]:
        """Raises payloads.EmptyBatchError when there is nothing to learn (never sent empty)."""
        payload = payloads.learn_batch_payload(statements, tags, scope)
        return await self.call("plur_learn_batch", payload, results.parse_learn_batch)

    async def learn_batch_items(self, items: Iterable[dict[str, Any]]) -> CallResult[results.BatchResult]:
        """A batch of engrams that carry their own tags and scope (replaying a spool).

        Raises payloads.EmptyBatchError when there is nothing to learn (never sent empty).
        """
        payload = payloads.learn_batch_items_payload(items)
        return await self.call("plur_learn_batch", payload, results.parse_learn_batch)

    async def recall(self, query: str, limit: int | None = None, scope: str = "", *,
                     timeout: float | None = None) -> CallResult[list[results.Engram]]:
        payload = payloads.recall_payload(query, limit, scope)
        return await self.call("plur_recall", payload, results.parse_recall, timeout=timeout)

    async def status(self) -> CallResult[results.Status]:
        return await self.call("plur_status", {}, results.parse_status)

    async def timeline(self, search: str | None = None, since: str | None = None) -> CallResult[list[results.Episode]]:
        return await self.call("plur_timeline", payloads.timeline_payload(search, since), results.parse_timeline)

    async def pinned(self, *, timeout: float | None = None) -> CallResult[list[results.Engram]]:
        """The pinned set (the user's standing instructions), with statements; marked cacheable,
        but the broker sends it to PLUR's writer every time (tmg/broker/calls.py: it spans every
        store PLUR was told of, which the broker's cache cannot see change)."""
        return await self.call("plur_pin", payloads.pinned_list_payload(), results.parse_pinned, timeout=timeout,
                               cached=True)

    async def pin(self, engram_id: str, pinned: bool = True) -> CallResult[dict[str, Any]]:
        return await self.call("plur_pin", payloads.pin_payload(engram_id, pinned), results.parse_pin)

    async def forget(self, engram_id: str, reason: str | None = None) -> CallResult[results.Engram]:
        return await self.call("plur_forget", payloads.forget_payload(engram_id, reason), results.parse_forget)
