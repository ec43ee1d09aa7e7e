"""The input line: prompt-toolkit on the engine's event loop, history across runs, emacs keys.

Keys (also listed by ``/help``):
    Enter             send
    Alt-Enter, Ctrl-J a new line (multi-line entry; pasted text keeps its newlines)
    Ctrl-C            clear the line (on an empty line: says how to quit)
    Ctrl-D            on an empty line: end the session
    Up/Down, Ctrl-R   history (in a Ctrl-R search, Enter takes the match, Ctrl-C leaves the search);
                      Right or Ctrl-E takes the grey suggestion from history
    Tab               complete a slash command, or `@server:` and its resource URIs
"""

from __future__ import annotations

from pathlib import Path
from typing import Awaitable, Callable, Iterable

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, merge_completers
from prompt_toolkit.document import Document
from prompt_toolkit.enums import EditingMode
from prompt_toolkit.filters import is_searching
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from tmg.private_files import private_dirs

KEYS_HELP = (
    ("Enter", "send"),
    ("Alt-Enter / Ctrl-J", "new line (multi-line entry)"),
    ("Ctrl-C", "cancel the answer being written; at the prompt, clear the line"),
    ("Ctrl-D", "end the session (on an empty line)"),
    ("Up / Ctrl-R", "previous prompts, kept across runs (Ctrl-R searches: Enter takes the match)"),
)

_STYLE = Style.from_dict({"mode": "ansicyan", "model": "ansigreen", "sep": "ansibrightblack", "arrow": "bold",
                          "warning": "bold ansired"})


class PromptInterrupted(Exception):
    """Ctrl-C at the prompt. ``had_text`` tells a cleared line from an empty one."""

    def __init__(self, had_text: bool) -> None:
        super().__init__("interrupted at the prompt")
        self.had_text = had_text


class SlashCompleter(Completer):
    """Completes ``/name`` at the start of the line; plain text gets no completions."""

    def __init__(self, names: Iterable[str] | Callable[[], Iterable[str]]) -> None:
        # A callable is asked at each completion: the session's skills come and go.
        self._names = names if callable(names) else sorted(names)

    def get_completions(self, document: Document, complete_event: CompleteEvent):
        text = document.text_before_cursor
        if not text.startswith("/") or " " in text or "\n" in text:
            return
        names = sorted(set(self._names())) if callable(self._names) else self._names
        for name in names:
            if name.startswith(text[1:]):
                yield Completion("/" + name, start_position=-len(text))


class ResourceCompleter(Completer):
    """Completes `@server:` and the server's resource URIs after it (the word before the cursor).

    ``servers`` gives the names a prompt may name now; ``uris(name)`` lists one server's
    resource URIs (awaited: resources/list, bounded, kept by the server after the first Tab)."""

    def __init__(self, servers: Callable[[], Iterable[str]], uris: Callable[[str], Awaitable[list[str]]]) -> None:
        self._servers = servers
        self._uris = uris

    def get_completions(self, document: Document, complete_event: CompleteEvent):
        return iter(())  # only the async path: listing resources waits for the server

    async def get_completions_async(self, document: Document, complete_event: CompleteEvent):
        word = document.get_word_before_cursor(WORD=True)
        if not word.startswith("@") or word.startswith("@@"):
            return
        name, colon, typed = word[1:].partition(":")
        servers = sorted(set(self._servers()))
        if not colon:
            for server in servers:
                if server.startswith(name):
                    yield Completion(f"@{server}:", start_position=-len(word))
            return
        if name not in servers:
            return
        for uri in await self._uris(name):
            if uri.startswith(typed):
                yield Completion(f"@{name}:{uri}", start_position=-len(word), display=uri)


def _key_bindings() -> KeyBindings:
    # These outrank prompt-toolkit's own bindings, so none of them may act during a Ctrl-R
    # search: there Enter accepts the match and Ctrl-C leaves the search (its defaults). Sending
    # the search buffer instead cleared it, and exiting from it left the REPL frozen.
    kb = KeyBindings()

    @kb.add("enter", filter=~is_searching)
    def _send(event: KeyPressEvent) -> None:
        event.current_buffer.validate_and_handle()

    @kb.add("escape", "enter", filter=~is_searching)
    @kb.add("c-j", filter=~is_searching)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @kb.add("c-c", filter=~is_searching)
    def _interrupt(event: KeyPressEvent) -> None:
        event.app.exit(exception=PromptInterrupted(bool(event.current_buffer.text)), style="class:aborting")

    return kb


class _RedactedFileHistory(FileHistory):
    """Input history on disk with config secrets masked, as in history.jsonl: a key pasted
    at the prompt must not sit in a plain file. This run's in-memory recall keeps the text."""

    def __init__(self, filename: str, redact: Callable[[str], str]) -> None:
        super().__init__(filename)
        self._redact = redact

    def store_string(self, string: str) -> None:
        super().store_string(self._redact(string))


def history_at(path: Path | None, redact: Callable[[str], str] = lambda s: s) -> History:
    """Input history in ``path`` (created on first use), or in memory when there is no path."""
    if path is None:
        return InMemoryHistory()
    try:
        private_dirs(path.parent)  # TMG_HOME
        path.touch(mode=0o600, exist_ok=True)
    except OSError:
        return InMemoryHistory()  # a read-only home must not stop the chat
    return _RedactedFileHistory(str(path), redact)


class PromptInput:
    """Reads one entry at a time with :meth:`read`; the prompt shows mode and model.

    Args:
        label: called before each prompt, returns ``(mode, model)``.
        history_path: where entries persist across runs (None: this run only).
        commands: slash command names, for Tab completion.
        redact: masks config secrets in what the history file keeps.
        input, output: prompt-toolkit's; the tests pass a pipe input and a dummy output.
    """

    def __init__(
        self,
        label: Callable[[], tuple[str, str]],
        history_path: Path | None,
        commands: Iterable[str] | Callable[[], Iterable[str]] = (),
        *,
        redact: Callable[[str], str] = lambda s: s,
        warning: Callable[[], str] = lambda: "",
        resources: Completer | None = None,
        input: Input | None = None,
        output: Output | None = None,
    ) -> None:
        self._label = label
        self._warning = warning  # shown after the model, e.g. "yolo" (permissions: nothing asks)
        self._session: PromptSession[str] = PromptSession(
            message=self._message,
            multiline=True,  # Enter is rebound to send; Alt-Enter/Ctrl-J add lines
            prompt_continuation=lambda width, _line, _soft: " " * max(0, width - 4) + "... ",
            key_bindings=_key_bindings(),
            history=history_at(history_path, redact),
            auto_suggest=AutoSuggestFromHistory(),
            completer=merge_completers([SlashCompleter(commands), *([resources] if resources is not None else [])]),
            complete_while_typing=False,
            enable_history_search=False,
            editing_mode=EditingMode.EMACS,
            style=_STYLE,
            include_default_pygments_style=False,
            input=input,
            output=output,
        )

    def when_shown(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once, right after the prompt is first drawn (to start slow work
        such as importing the gateway without delaying the prompt itself)."""
        app = self._session.app

        def fire(_app) -> None:
            app.after_render -= fire
            callback()

        app.after_render += fire

    def print_above(self, write: Callable[[], None]) -> None:
        """Run ``write`` (it prints lines) above the prompt while one is being edited, then
        redraw the prompt with what was typed; run it at once when no prompt is showing."""
        app = self._session.app
        if not app.is_running or app.is_done:
            write()
            return
        from prompt_toolkit.application import run_in_terminal

        run_in_terminal(write, in_executor=False)

    def _message(self) -> FormattedText:
        mode, model = self._label()
        warning = self._warning()
        return FormattedText([
            ("class:mode", mode), ("class:sep", " · "), ("class:model", model),
            *([("class:sep", " · "), ("class:warning", warning)] if warning else []), ("class:arrow", " > "),
        ])

    async def read(self) -> str:
        """The next entry, as typed.

        Raises:
            EOFError: Ctrl-D on an empty line (or the input closed).
            PromptInterrupted: Ctrl-C.
        """
        return await self._session.prompt_async()
