"""What the REPL itself prints, apart from answers: command output on stdout, hints, the usage
line and errors on stderr (SPEC §1: only answers and asked-for output go to stdout)."""

from __future__ import annotations

import contextlib
import os
from typing import IO, Callable, Iterator

Redact = Callable[[str], str]


class ReplScreen:
    def __init__(self, out: IO[str], err: IO[str], *, color: bool, markdown: bool,
                 redact: Redact = lambda s: s) -> None:
        self._out = out
        self._err = err
        self._color = color
        self._markdown = markdown  # render Markdown (a terminal without -r)
        self.redact = redact

    def _write(self, stream: IO[str], text: str, style: str | None) -> None:
        text = self.redact(text)
        try:
            if self._color and style:
                stream.write(f"\x1b[{style}m{text}\x1b[0m\n")
            else:
                stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError):  # the terminal went away (SIGHUP): nothing left to tell
            pass

    def columns(self) -> int:
        """The terminal's width (80 when the output is not a terminal)."""
        try:
            return os.get_terminal_size(self._out.fileno()).columns
        except (OSError, ValueError, AttributeError):
            return 80

    def say(self, text: str) -> None:
        """Output the user asked for (a command's answer)."""
        self._write(self._out, text, None)

    def hint(self, text: str) -> None:
        """A quiet line: the usage line, how to quit, the greeting."""
        self._write(self._err, text, "2")

    def info(self, text: str) -> None:
        self._write(self._err, f"tmg: {text}", "36")

    def error(self, text: str) -> None:
        self._write(self._err, f"tmg: error: {text}", "31")

    def markdown(self, text: str) -> None:
        """A Markdown document (the transcript): rendered on a terminal, plain otherwise."""
        if not self._markdown:
            self._write(self._out, text.rstrip("\n"), None)
            return
        from rich.console import Console

        from tmg.ui.chat_markdown import ChatMarkdown

        Console(file=self._out, no_color=not self._color, highlight=False).print(ChatMarkdown(self.redact(text)))


@contextlib.contextmanager
def typeahead_mode(stdin_fd: int | None) -> Iterator[None]:
    """Between prompts (an answer streaming, a command running) keys typed ahead are kept for
    the next prompt exactly as typed: not echoed into the output, Enter not turned into a
    newline (the tty's ICRNL would make it Ctrl-J, which adds a line), Ctrl-D not an end of
    file. Ctrl-C still raises SIGINT. prompt-toolkit switches to raw mode for each prompt and
    back to this mode after it; the terminal's own settings come back when the REPL ends."""
    saved = None
    if stdin_fd is not None:
        try:
            import termios

            if os.isatty(stdin_fd):
                saved = termios.tcgetattr(stdin_fd)
                mode = [list(x) if isinstance(x, list) else x for x in saved]
                mode[0] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR)
                mode[3] &= ~(termios.ECHO | termios.ECHOCTL | termios.ICANON)
                mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
                termios.tcsetattr(stdin_fd, termios.TCSANOW, mode)  # TCSANOW: keep what was typed
        except (ImportError, OSError, ValueError):
            saved = None
    try:
        yield
    finally:
        if saved is not None:
            try:
                import termios

                termios.tcsetattr(stdin_fd, termios.TCSANOW, saved)
            except (OSError, ValueError):
                pass
