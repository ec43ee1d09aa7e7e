"""WriteLock: advisory, bounded, and never in the way of a write."""

from __future__ import annotations

import asyncio

from tests.support.waiting import finishes
from tmg.memory.lock import WriteLock


async def test_a_second_holder_waits_for_the_first(tmp_path) -> None:
    path = tmp_path / "plur" / ".tmg-write.lock"
    entered: list[bool] = []

    async def second() -> None:
        async with WriteLock(path, wait=3600).held() as locked:
            entered.append(locked)

    async with WriteLock(path, wait=3600).held() as locked:
        assert locked and path.exists()
        waiter = asyncio.create_task(second())
        for _ in range(3):
            await asyncio.sleep(0)  # the second holder opens the file, finds it locked, and polls
        assert entered == [] and not waiter.done()
    await finishes(waiter)
    assert entered == [True]  # it got the lock once the first released it


async def test_a_second_holder_proceeds_unlocked_after_its_wait(tmp_path) -> None:
    path = tmp_path / "plur" / ".tmg-write.lock"
    notes: list[str] = []

    async def second() -> bool:
        async with WriteLock(path, wait=0.05, debug=notes.append).held() as locked:
            return locked

    async with WriteLock(path, wait=3600).held() as locked:
        assert locked
        assert await finishes(second()) is False  # the first never lets go: the write goes on unlocked
    assert "busy for 0.05 s; writing unlocked" in notes[0]
    async with WriteLock(path).held() as now:
        assert now  # released with the block


async def test_the_lock_is_taken_in_turn(tmp_path) -> None:
    path = tmp_path / ".tmg-write.lock"
    order: list[str] = []

    async def write(name: str) -> None:
        async with WriteLock(path, wait=2).held() as locked:
            assert locked
            order.append(f"{name}+")
            await asyncio.sleep(0.05)
            order.append(f"{name}-")

    await asyncio.gather(write("a"), write("b"))
    assert order in (["a+", "a-", "b+", "b-"], ["b+", "b-", "a+", "a-"])


async def test_an_unusable_path_proceeds_unlocked(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    notes: list[str] = []
    async with WriteLock(blocker / "sub" / ".tmg-write.lock", debug=notes.append).held() as locked:
        assert not locked
    assert "unlocked" in notes[0]
