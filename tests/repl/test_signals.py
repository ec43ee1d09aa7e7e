"""Ctrl-C in the REPL: after a prompt the SIGINT handler that was there before is back (never
Python's default, which would end the REPL from anywhere), and Ctrl-C during a slash command
interrupts just that command."""

from __future__ import annotations

import asyncio
import signal

from tests.repl.harness import Reply, Rig


def test_the_sigint_handler_from_before_a_prompt_is_back_after_it(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies.append(Reply("hello"))
    seen: list[object] = []

    def entry(text: str):
        async def step() -> str:
            seen.append(signal.getsignal(signal.SIGINT))
            return text
        return step

    assert rig.run(entry("hi"), entry("/exit")) == 0
    before, after = seen
    assert after == before and after is not signal.default_int_handler


def test_ctrl_c_during_a_slash_command_interrupts_it_and_the_repl_goes_on(tmp_path, monkeypatch):
    rig = Rig(tmp_path, monkeypatch)
    rig.model.replies += [Reply("hello"), Reply("still here")]
    ran: list[str] = []

    async def slow_command(repl, command) -> None:
        if command.name == "exit":
            repl.done = True
            return
        ran.append(command.name)
        signal.raise_signal(signal.SIGINT)
        await asyncio.sleep(30)
        ran.append("not interrupted")

    monkeypatch.setattr("tmg.repl.actions.run_command", slow_command)
    assert rig.run("hi", "/memory", "again", "/exit") == 0
    assert ran == ["memory"]
    assert "interrupted" in rig.err.getvalue()
    assert rig.out.getvalue() == "hello\nstill here\n"
