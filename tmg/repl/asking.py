"""A question put to the user at the terminal between prompts (a tool call's consent, a server's
form): the line it reads, and the typeahead it drops first so keys pressed while the model
worked cannot answer a question nobody has read yet."""

from __future__ import annotations

import os

from tmg.environment import Environment


async def read_line(message: str) -> str | None:
    """One line typed after `message`; None when the user pressed Ctrl-C or Ctrl-D."""
    from prompt_toolkit import PromptSession

    try:
        return await PromptSession().prompt_async(message)
    except (KeyboardInterrupt, EOFError):
        return None


def drop_typeahead(envr: Environment) -> None:
    stdin = envr.stdin
    try:
        fd = stdin.fileno() if stdin is not None else None
        if fd is not None and os.isatty(fd):
            import termios

            termios.tcflush(fd, termios.TCIFLUSH)
    except (OSError, ValueError, AttributeError, ImportError):
        pass


def printable(text: str) -> str:
    """Control characters escaped (tabs kept): a command, or a server's text, cannot hide part of
    itself or redraw the terminal."""
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in text)
