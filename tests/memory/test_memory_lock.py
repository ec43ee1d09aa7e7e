"""WriteLock: advisory, bounded, and never in the way of a write."""

from __future__ import annotations

import asyncio

from tmg.memory.lock import WriteLock


async def test_a_second_holder_waits_then_proceeds_unlocked(tmp_path) -> None:
    path = tmp_path / "plur" / ".tmg-write.lock"
    first, second = WriteLock(path, wait=0.2), WriteLock(path, wait=0.2)
    loop = asyncio.get_running_loop()
    async with first.held() as locked:
        assert locked and path.exists()
        started = loop.time()
        async with second.held() as also:
            waited = loop.time() - started
        assert not also and 0.15 <= waited < 1.0
    async with second.held() as now:
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
