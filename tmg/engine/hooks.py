"""Engine hooks: registered once per process; a failing hook never fails the turn."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Protocol

from tmg.engine.phases import Phase
from tmg.engine.turn import Turn


class Hook(Protocol):
    """Implement any subset; missing methods are simply not called."""

    def before_turn(self, turn: Turn) -> Any: ...

    def after_turn(self, turn: Turn, error: BaseException | None) -> Any: ...

    def on_phase_transition(self, old: Phase, new: Phase, state: Any) -> Any: ...


class HookSet:
    """The process's hooks. Each may be sync or async; exceptions are reported, not raised."""

    def __init__(self, report: Callable[[str], None] = lambda _m: None) -> None:
        self._hooks: list[Any] = []
        self._report = report

    def register(self, hook: Any) -> None:
        if any(h is hook for h in self._hooks):
            raise ValueError(f"hook {hook!r} is already registered; hooks are registered once per process")
        self._hooks.append(hook)

    async def _fire(self, method: str, *args: Any) -> None:
        for hook in self._hooks:
            fn = getattr(hook, method, None)
            if fn is None:
                continue
            try:
                result = fn(*args)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:  # a hook's bug must not cost the user their answer
                self._report(f"hook {type(hook).__name__}.{method} failed: {exc}")

    async def before_turn(self, turn: Turn) -> None:
        await self._fire("before_turn", turn)

    async def after_turn(self, turn: Turn, error: BaseException | None) -> None:
        await self._fire("after_turn", turn, error)

    async def transition(self, old: Phase, new: Phase, state: Any) -> None:
        await self._fire("on_phase_transition", old, new, state)
