"""Answers on a busy machine: in a real terminal (tmux, 100x30) beside CPU burners, every streamed
answer is on screen once while it streams and once in the terminal's history afterwards.

Issue 28: with four CPU-bound processes on two cores, a fresh REPL now and then showed an answer
twice. Twenty answers of several shapes go through one REPL session; each line of each answer
carries a token of its own (``a07l03``) that is counted on every screen polled during the stream
and, at the end, in the whole scrollback (``capture-pane -S -``).
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from e2e.mock_llm import Text
from e2e.tmux import Terminal, tmux_available

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")]

BURNERS = 4  # on the two cores CI has: the load under which the double draw was seen
ANSWERS = 20


def _paragraphs(i: int) -> tuple[str, list[str]]:
    return f"a{i:02d}l01 first line of the answer\n\na{i:02d}l02 second paragraph here", [f"a{i:02d}l01", f"a{i:02d}l02"]


def _list(i: int) -> tuple[str, list[str]]:
    tokens = [f"a{i:02d}l{n:02d}" for n in range(1, 6)]
    items = "\n".join(f"- {t} an item of the list" for t in tokens[1:])
    return f"{tokens[0]} The list:\n\n{items}\n\nThat is all.", tokens


def _code(i: int) -> tuple[str, list[str]]:
    tokens = [f"a{i:02d}l{n:02d}" for n in range(1, 5)]
    code = "\n".join(f"value_{n} = '{t}'" for n, t in enumerate(tokens[1:]))
    return f"{tokens[0]} In Python:\n\n```python\n{code}\n```", tokens


def _long(i: int) -> tuple[str, list[str]]:
    tokens = [f"a{i:02d}l{n:02d}" for n in range(1, 25)]  # 24 paragraphs: 47 rows, more than the screen
    return "\n\n".join(f"{t} paragraph {n} of a long answer that scrolls" for n, t in enumerate(tokens, 1)), tokens


def _lines(i: int) -> tuple[str, list[str]]:
    tokens = [f"a{i:02d}l{n:02d}" for n in range(1, 4)]
    return "\n".join(f"{t} a line of its own" for t in tokens), tokens


SHAPES = (_paragraphs, _list, _code, _long, _lines)


@pytest.fixture
def burners():
    procs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(BURNERS)]
    yield
    for proc in procs:
        proc.kill()
        proc.wait()


def _prompt_is_back(screen: str) -> bool:
    lines = [line for line in screen.splitlines() if line.strip()]
    return bool(lines) and lines[-1].rstrip() == "default · openai/mock-model >"


def test_twenty_answers_on_a_loaded_machine_are_each_shown_once(tmg, llm, burners):
    term = Terminal(width=100, height=30)
    try:
        term.start_tmg(tmg, timeout=60)
        all_tokens: list[str] = []
        for i in range(ANSWERS):
            text, tokens = SHAPES[i % len(SHAPES)](i)
            all_tokens += tokens
            llm.enqueue(Text(text, chunks=8, chunk_delay=0.03, usage=(10, 5)))
            term.ask(f"question {i}")
            twice: list[str] = []
            deadline = time.monotonic() + 60
            while True:  # every screen while it streams: no line of the answer on it twice
                screen = term.screen()
                twice += [f"{t}:\n{screen}" for t in tokens if screen.count(t) > 1]
                if _prompt_is_back(screen) and tokens[-1] in screen:
                    break
                assert time.monotonic() < deadline, f"answer {i} did not finish; the screen:\n{screen}"
            assert not twice, f"answer {i} shown twice at some moment:\n{twice[0]}"
        history = term.scrollback()
        counts = {t: history.count(t) for t in all_tokens}
        assert all(n == 1 for n in counts.values()), (
            f"lines not shown exactly once: { {t: n for t, n in counts.items() if n != 1} }\n{history}")
        assert "```" not in history and "- a" not in history  # rendered, not raw Markdown
        term.ask("/exit")
        assert term.exit_status() == 0
    finally:
        term.close()
