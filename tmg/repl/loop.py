"""The REPL loop: read an entry, run a command or one prompt, repeat; end the session once.

Each prompt runs as its own asyncio task on the loop prompt-toolkit reads from, so Ctrl-C
(SIGINT, while the answer streams and the terminal is not in raw mode) cancels just that task:
the gateway closes its HTTP stream, the engine reports the partial answer as interrupted, and
the prompt comes back. At the prompt prompt-toolkit owns the keys, so Ctrl-C arrives there as a
key instead.

Sessions: the REPL holds one open :class:`~tmg.session.runner.ChatSession` at a time. ``/new`` and
``/mode`` open the next session first (so a failure keeps the current one), then end the old one
through its own ``SessionEnd``. When the REPL stops -- ``/exit``, Ctrl-D, EOF, an exception,
SIGTERM or SIGHUP -- the open session's end runs, exactly once, in ``run``'s ``finally``.

Signals never abandon an end: one that arrives while an end runs (at exit, or the old
session's during ``/new``) hurries it -- its memory flush is cut short, the batch being on disk
before it is sent -- and the end itself is shielded from cancellation. A slash command runs as a task like
a prompt, so Ctrl-C interrupts it and the REPL goes on; after each, the SIGINT handler that was
there before is put back.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Awaitable, Callable, Protocol

from tmg import __version__
from tmg.compose import load_live_config, open_session
from tmg.engine.events import FanOut, NullEvents
from tmg.engine.turn import Turn
from tmg.environment import Environment
from tmg.errors import TmgError
from tmg.llm.gateway import GatewayError
from tmg.memory.runtime import MemoryServers
from tmg.repl.elicit import ElicitForm
from tmg.mcp.server_set import McpToolServers
from tmg.repl import commands
from tmg.repl.screen import ReplScreen, typeahead_mode
from tmg.repl.consent import ConsentPrompt
from tmg.repl.plan_review import PlanReviewPrompt
from tmg.repl.trust_question import TrustQuestion
from tmg.repl.usage import UsageMeter
from tmg.session.ending import SessionEnd
from tmg.repl.resume_picker import pick_in
from tmg.session.options import ChatOptions
from tmg.session.runner import ChatSession
from tmg.session.signals import ending_signals, restore_sigint
from tmg.ui.answer import AnswerSink, make_answer_sink
from tmg.ui.console_events import ConsoleEvents
from tmg.mcp.oauth import OAuthStore, login_line
from tmg.ui.notices import Notices

EXIT_OK, EXIT_INTERRUPTED = 0, 130
QUIT_HINT = "press Ctrl-D or type /exit to quit"
_ENDING_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s)


class EntryReader(Protocol):
    async def read(self) -> str:
        """The next entry; EOFError ends the session, PromptInterrupted is Ctrl-C at the prompt."""
        ...


SessionOpener = Callable[..., Awaitable[ChatSession]]


class _InterruptSeen(NullEvents):
    """Notes whether the engine reported the interruption itself (it does during Inference)."""

    def __init__(self) -> None:
        self.seen = False

    def on_interrupted(self, partial: str, turn: Turn) -> None:
        self.seen = True


class Repl:
    """One interactive run. ``reader`` defaults to prompt-toolkit on the terminal; tests pass
    their own, and ``opener`` (``open_session``'s signature) to wire test doubles."""

    def __init__(
        self,
        options: ChatOptions,
        envr: Environment,
        *,
        reader: Callable[["Repl"], EntryReader] | None = None,
        opener: SessionOpener = open_session,
    ) -> None:
        self.options = options
        self.envr = envr
        color = bool(envr.stdout_isatty) and not envr.no_color
        self.notices = Notices(envr.stderr, color=color)
        self.screen = ReplScreen(envr.stdout, envr.stderr, color=color,
                                 markdown=bool(envr.stdout_isatty) and not options.raw)
        self.answer: AnswerSink = make_answer_sink(envr.stdout, terminal=bool(envr.stdout_isatty),
                                                   raw=options.raw, no_color=envr.no_color)
        self.meter = UsageMeter()
        self.session: ChatSession | None = None
        self._opener = opener
        self._make_reader = reader or _terminal_reader
        self._reader: EntryReader | None = None
        self.picking = False  # the --resume picker is asking: the prompt says so
        self._interrupt = _InterruptSeen()
        self._ending_signal: int | None = None
        self._running_ends: list[SessionEnd] = []  # session ends in progress (a signal hurries them)
        self.done = False
        self._parsers_warm = False
        # One memory server per process: /new and /mode sessions share it; closed when the REPL ends.
        self.memory_servers = MemoryServers(
            warn=self.notices.warn, debug=self.notices.notice if envr.debug else (lambda _m: None))
        # Likewise the MCP servers whose tools the model gets: started once, closed at the end.
        # A server that wants an OAuth login shows where to log in here (tmg.mcp.oauth).
        form = ElicitForm(envr, before=self.notices.region.settle)
        self.mcp_servers = McpToolServers(warn=self.notices.warn, ask_user=form, ask_url=form.open_url,
                                          log=self.notices.notice if envr.debug else None,
                                          oauth_store=OAuthStore.for_env(envr.env),
                                          show_login=lambda name, url: self.notices.notice(login_line(name, url)))
        self.trust_question = TrustQuestion(envr)  # an untrusted ./tmg.yaml: asked once, before the first session
        # A tool call the permission engine asks about is put to the user here, below the
        # answer so far, made final first (questions are no lines: nothing is redrawn below them).
        self.consent = ConsentPrompt(envr, before=self.notices.region.settle)
        self.plan_review = PlanReviewPrompt(envr, before=self.notices.region.settle)  # plan mode's plan, likewise
        self.mode_before_plan: str | None = None  # what /plan off goes back to

    # -- sessions -------------------------------------------------------------------------

    async def open(self, options: ChatOptions, prewarm: bool = True) -> ChatSession:
        """Open (or resume) a session for ``options``; does not touch the current one."""
        live = load_live_config(options, self.envr, self.notices, ask=self.trust_question)
        if options.resume == "":  # --resume without an id: the user picks one of this project's
            options = await pick_in(self, options, live.get().mode)
        screen = FanOut(ConsoleEvents(self.answer, self.notices), self.meter, self._interrupt)
        session = await self._opener(options, self.envr, live, self.notices, screen, memory_servers=self.memory_servers,
                               mcp_servers=self.mcp_servers, interactive=True, asker=self.consent,
                               plan_review=self.plan_review)
        self.screen.redact = session.redact
        # The memory server starts now, beside the prompt; config saves apply at the next phase
        # boundary (SPEC §3).
        session.start()
        if prewarm:
            self.prewarm(session)
        return session

    async def switch(self, options: ChatOptions) -> bool:
        """Make a session for ``options`` the current one, ending the old one. False on failure."""
        try:
            new = await self.open(options)
        except TmgError as exc:
            self.screen.error(str(exc))
            return False
        old, self.session, self.options = self.session, new, options
        if old is not None:
            await self._end(old.end)  # from a command: its Ctrl-C handler hurries the end
        return True

    async def _end(self, end: SessionEnd) -> None:
        """Run a session's end; SIGTERM and SIGHUP meanwhile only hurry it."""
        self._running_ends.append(end)
        try:
            await end.run()
        finally:
            self._running_ends.remove(end)

    def _hurry_ends(self) -> None:
        for end in list(self._running_ends):
            end.hurry()

    def prewarm(self, session: ChatSession) -> None:
        """Start importing the gateway backend now, so a person typing never waits for it (nor
        for the shell parser at the first command the model runs, nor the teaching scorer)."""
        session.prewarm_gateway()
        if not self._parsers_warm:
            self._parsers_warm = True
            import threading

            from tmg.memory.teaching import prewarm as teaching  # the first prompt that may teach
            from tmg.permissions.shell import prewarm as shell

            threading.Thread(target=lambda: (shell(), teaching()), name="prewarm-parsers", daemon=True).start()

    def reader(self) -> EntryReader:
        """The input line, made on first use (the --resume picker may need it before a session opens)."""
        if self._reader is None:
            self._reader = self._make_reader(self)
        return self._reader

    def label(self) -> tuple[str, str]:
        """``(mode, model)`` for the prompt."""
        if self.picking:
            return ("resume", "number")
        if self.session is None:
            return ("?", "?")
        try:
            model = self.session.gateways.spec_for(self.session.live.get()).model
        except TmgError:
            model = "no model"
        return (self.session.ref.mode, model)

    def warning(self) -> str:
        """What the prompt line must show beside mode and model: "yolo" when nothing asks, "plan"
        while only reads run."""
        gate = getattr(self.session, "gate", None)
        mode = gate.mode() if gate is not None else ""
        return mode if mode in ("yolo", "plan") else ""

    # -- the loop -------------------------------------------------------------------------

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        for sig in _ENDING_SIGNALS:
            loop.add_signal_handler(sig, self._end_by_signal, sig, main)
        try:
            self.session = await self.open(self.options, prewarm=False)
            self.options = self.options.first_open_only()  # /new and /mode choose their own session
            self._greet()
            reader = self.reader()
            # Lines said while the user types (a config save, a memory server that failed)
            # print above the prompt and leave the line being edited intact.
            self.notices.set_printer(getattr(reader, "print_above", None))
            session = self.session
            when_shown = getattr(reader, "when_shown", None)
            if when_shown is not None:  # warm up once the prompt is drawn: it must not wait for us
                when_shown(lambda: self.prewarm(session))
            else:
                self.prewarm(session)
            with typeahead_mode(_stdin_fd(self.envr)):
                while not self.done:
                    await self._one_entry(reader)
            return EXIT_OK
        except asyncio.CancelledError:
            if self._ending_signal is None or main is None:
                raise
            main.uncancel()
            return EXIT_INTERRUPTED
        finally:
            try:
                if self.session is not None:
                    with ending_signals(loop, self._hurry_ends):  # Ctrl-C now only hurries the end
                        await self._end(self.session.end)
            finally:
                try:
                    await asyncio.gather(self.memory_servers.aclose(), self.mcp_servers.aclose())
                finally:
                    for sig in _ENDING_SIGNALS:  # kept until now: during the end they only hurry it
                        loop.remove_signal_handler(sig)

    def _end_by_signal(self, sig: int, main: asyncio.Task | None) -> None:
        # An end running now (/new's, or the last one) is cut short where it would wait for the
        # memory server (its batch is on disk before it is sent); it is never abandoned.
        self._hurry_ends()
        if self._ending_signal is None and main is not None:
            self._ending_signal = sig
            main.cancel()  # unwinds a running prompt (marked interrupted) and the input line

    async def _one_entry(self, reader: EntryReader) -> None:
        from tmg.repl.actions import activate_skill, run_command, run_shell_escape
        from tmg.repl.input import PromptInterrupted

        try:
            entry = await reader.read()
        except PromptInterrupted as exc:
            if not exc.had_text:
                self.screen.hint(QUIT_HINT)
            return
        except EOFError:  # Ctrl-D on an empty line, or the input closed
            self.done = True
            return
        parsed = commands.parse(entry)
        if parsed is None:
            return
        if isinstance(parsed, commands.UnknownCommand):
            if activate_skill(self, parsed.typed):  # /NAME [request]: a skill
                if parsed.arg:
                    await self.ask(entry.strip())
                return
            self.screen.error(self._unknown(parsed).message())
        elif isinstance(parsed, commands.McpPrompt):
            await self._mcp_prompt(parsed)
        elif isinstance(parsed, commands.Command):
            await self._command(run_command(self, parsed))
            if parsed.name == "plan" and parsed.arg not in ("", "off"):  # /plan PROMPT: asked in plan mode
                await self.ask(parsed.arg)
        elif isinstance(parsed, commands.ShellEscape):
            await self._command(run_shell_escape(self, parsed.command))
        else:
            await self.ask(parsed.text)

    def _unknown(self, parsed: commands.UnknownCommand) -> commands.UnknownCommand:
        """An unknown command, with the skill it likely meant when no command fits (a typo)."""
        skills = self.session.skills if self.session is not None else None
        if parsed.suggestions or skills is None:
            return parsed
        import difflib

        close = difflib.get_close_matches(parsed.typed, skills.catalog.names(), n=1, cutoff=0.75)
        return commands.UnknownCommand(parsed.typed, tuple(close), parsed.arg)

    async def _mcp_prompt(self, entry: commands.McpPrompt) -> None:
        """An MCP server's prompt, filled in by the server, sent as this prompt."""
        from tmg.mcp.errors import McpCallError

        try:
            text = await self.mcp_servers.prompt(entry.server, entry.prompt, entry.arg)
        except McpCallError as exc:
            self.screen.error(str(exc))
            return
        if not text.strip():
            self.screen.error(f"MCP prompt {entry.prompt} came back empty; nothing was sent")
            return
        await self.ask(text)

    async def _command(self, coro) -> None:
        """Run a slash command as a task that Ctrl-C cancels (the REPL goes on)."""
        loop = asyncio.get_running_loop()
        task = asyncio.create_task(coro)
        previous = signal.getsignal(signal.SIGINT)
        loop.add_signal_handler(signal.SIGINT, self._interrupt_command, task)
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the session itself is ending (SIGTERM, SIGHUP)
            self.notices.notice("interrupted")
        finally:
            restore_sigint(loop, previous)

    def _interrupt_command(self, task: asyncio.Task) -> None:
        if self._running_ends:
            self._hurry_ends()  # /new or /mode is ending the old session: hurry it, never abandon it
        else:
            task.cancel()

    async def ask(self, text: str) -> None:
        """Run one prompt as a task that Ctrl-C cancels; report its outcome and usage."""
        session = self.session
        assert session is not None
        loop = asyncio.get_running_loop()
        self.meter.start()
        self._interrupt.seen = False
        try:
            session.engine.admit(text)  # a refused prompt is kept nowhere
        except TmgError as exc:
            self.screen.error(str(exc))
            return
        task = asyncio.create_task(session.run_prompt(text))
        previous = signal.getsignal(signal.SIGINT)
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the session itself is ending (SIGTERM, SIGHUP)
            if not self._interrupt.seen:  # cancelled outside the stream (a tool, a retry wait)
                session.transcript.notice("interrupted by the user")
                self.notices.notice("interrupted")
            return
        except (TmgError, GatewayError) as exc:
            session.transcript.error(str(exc))
            self.screen.error(str(exc))
        except Exception as exc:  # a bug must not take the conversation down with it
            session.transcript.error(f"internal error: {type(exc).__name__}: {exc}")
            self.screen.error(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
            if self.envr.debug:
                import traceback

                traceback.print_exc()
        finally:
            restore_sigint(loop, previous)  # not Python's default: that would end the REPL
        if self.meter.prompt.calls:
            self.screen.hint(self.meter.prompt.line())

    def _greet(self) -> None:
        assert self.session is not None
        count = len(self.session.engine.history.messages)
        resumed = f"resumed, {count} messages" if count else "new"
        self.screen.hint(f"tmg {__version__} · session {self.session.ref.id} ({resumed}) · /help · Ctrl-D quits")


def _stdin_fd(envr: Environment) -> int | None:
    if not envr.stdin_isatty or envr.stdin is None:
        return None
    try:
        return envr.stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return None


def _terminal_reader(repl: Repl) -> EntryReader:
    from tmg.repl.reader import terminal_reader  # prompt-toolkit: only a REPL on a terminal needs it

    return terminal_reader(repl)


def run_repl(options: ChatOptions, envr: Environment) -> int:
    """The interactive chat, on its own event loop; returns the exit code."""
    return asyncio.run(Repl(options, envr).run())
