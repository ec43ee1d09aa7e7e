"""The single session end: each step once, in order, whatever fails."""

from __future__ import annotations

from tmg.session.ending import SessionEnd


async def test_session_end_goes_on_when_its_report_cannot_be_shown():
    ran = []

    def dead_terminal(_message):
        raise OSError("EIO: the terminal hung up")

    def failing():
        raise RuntimeError("boom")

    end = SessionEnd(report=dead_terminal)
    end.add("failing step", failing)
    end.add("release the lock", lambda: ran.append("released"))
    await end.run()
    await end.run()
    assert ran == ["released"]


async def test_resources_are_released_after_every_step_the_last_made_first():
    ran = []
    end = SessionEnd()
    end.add_resource("release the lock", lambda: ran.append("lock"))
    end.add("stop the watcher", lambda: ran.append("watcher"))
    end.add_resource("close the transcript", lambda: ran.append("transcript"))
    end.add("flush memory", lambda: ran.append("flush"))
    await end.run()
    assert ran == ["watcher", "flush", "transcript", "lock"]
