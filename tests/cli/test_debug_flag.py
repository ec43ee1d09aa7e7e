"""`--debug` is the same switch as TMG_DEBUG=1: it reaches every part that reads Environment.debug."""

from __future__ import annotations

from typing import Any

import pytest

from tmg.cli import oneshot
from tmg.cli.chat import app
from tmg.environment import Environment


def test_the_switch_is_the_flag_or_the_variable() -> None:
    assert not Environment(env={}).debug
    assert Environment(env={}, debug_flag=True).debug
    assert Environment(env={"TMG_DEBUG": "1"}).debug
    assert not Environment(env={"TMG_DEBUG": "0"}).debug


@pytest.mark.parametrize("args,expected", [(["--debug", "a question"], True), (["a question"], False)])
def test_the_chat_command_hands_debug_to_the_session(monkeypatch, args, expected) -> None:
    seen: list[Environment] = []

    def run_oneshot(_options: Any, envr: Environment, _words: list[str], **_formats: Any) -> int:
        seen.append(envr)
        return 0

    monkeypatch.setattr(oneshot, "run_oneshot", run_oneshot)
    app(args=args, prog_name="tmg", standalone_mode=False)
    (envr,) = seen
    assert envr.debug is expected
