"""A question put to the user at the terminal between prompts (a tool call's consent, a server's
form): one key or a line, read after the typeahead is dropped, so keys pressed while the model
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


async def read_key(message: str, keys: str) -> str | None:
    """One of `keys` pressed after `message`, without Enter (the answer is shown after the
    message); None for Ctrl-C, Ctrl-D or Escape. Other keys do nothing. What is typed after the
    key is left for the next prompt: `ynow write x` answers y and `now write x` is the next line."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    chosen = [""]
    bindings = KeyBindings()

    def answer(key: str | None):
        def handler(event) -> None:
            chosen[0] = key or "no answer"
            event.app.exit(result=key)
        return handler

    for key in keys:
        bindings.add(key)(answer(key))
        if key.upper() != key:
            bindings.add(key.upper())(answer(key))
    for stop in ("c-c", "c-d", "escape"):
        bindings.add(stop)(answer(None))
    bindings.add("<any>")(lambda _event: None)
    control = FormattedTextControl(lambda: message + chosen[0], show_cursor=True)
    app: Application[str | None] = Application(layout=Layout(Window(control, dont_extend_height=True)),
                                                key_bindings=bindings, full_screen=False)
    return await app.run_async()


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
