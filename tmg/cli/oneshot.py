"""One-shot: read the prompt from arguments and/or piped stdin, stream one answer, exit."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import time

from tmg.compose import load_live_config, open_session
from tmg.config.live import LiveConfig
from tmg.context.validator import check_prompt_size
from tmg.engine.events import EngineEvents, FanOut
from tmg.environment import Environment
from tmg.errors import UsageError
from tmg.redaction import process_redactor
from tmg.session.signals import ending_signals
from tmg.session.options import ChatOptions
from tmg.session.runner import ChatSession
from tmg.ui.answer import make_answer_sink
from tmg.ui.console_events import ConsoleEvents
from tmg.ui.json_events import JsonEvents, NoAnswer
from tmg.ui.notices import Notices


_ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# How long piped stdin may stay open before tmg says it is still reading it.
STDIN_NOTICE_AFTER_S = 2.0
# A memory server still starting after this is a cold start (a warm broker answers within a few ms).
COLD_START_AFTER_S = 0.05


def gather_prompt(words: list[str], envr: Environment, notices: Notices | None = None) -> str:
    """The argument, then piped stdin after it. Never reads a terminal stdin."""
    text = " ".join(words).strip()
    if envr.stdin is not None and not envr.stdin_isatty:
        piped = _read_piped(envr.stdin, notices).strip()
        if piped:
            text = f"{text}\n\n{piped}" if text else piped
    if not text:
        if envr.stdin_isatty and not envr.stdout_isatty:
            raise UsageError("no prompt given: pass a question as an argument or pipe text in "
                             "(interactive chat needs a terminal on both stdin and stdout)")
        raise UsageError('no prompt given: pass a question as an argument (tmg "question") or pipe text in')
    return text


def _read_piped(stdin, notices: Notices | None = None) -> str:
    """Piped text in any encoding tmg can show: UTF-8, with undecodable bytes replaced."""
    raw = getattr(stdin, "buffer", None)
    if raw is None:  # a text stream handed in by a test or an embedding program
        return stdin.read()
    data = _read_to_end(raw, notices)
    if b"\0" in data:
        raise UsageError("the piped input is binary (it contains NUL bytes); pipe text instead")
    return data.decode("utf-8", errors="replace")


def _read_to_end(raw, notices: Notices | None) -> bytes:
    """All of stdin; if it has not ended after a moment, say once on stderr what tmg waits for
    (`sleep 100 | tmg "x"`, or a forgotten `<` in a script, would otherwise look like a hang)."""
    try:
        fd = raw.fileno()
    except (OSError, ValueError):
        return raw.read()
    chunks: list[bytes] = []
    deadline = time.monotonic() + STDIN_NOTICE_AFTER_S
    told = notices is None
    while True:
        if not told:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                notices.notice("reading the prompt from stdin until it ends (Ctrl-D ends typed input; "
                               "run with </dev/null to send no stdin)")
                told = True
                continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def run_oneshot(options: ChatOptions, envr: Environment, words: list[str], output_format: str = "text") -> int:
    """``output_format`` json or stream-json: stdout is JSON only (tmg.ui.json_events), and
    whatever ends the run, a failure too, ends it with the result object."""
    notices = Notices(envr.stderr, color=False)
    if output_format == "text":
        return _run(options, envr, words, notices, None)
    machine = JsonEvents(envr.stdout, stream=output_format == "stream-json", redact=process_redactor())
    try:
        code = _run(options, envr, words, notices, machine)
    except BaseException as exc:
        machine.finish(exc)  # the result says why; run_guarded says it on stderr and exits with its code
        raise
    machine.finish(exit_code=code)  # 1 when a tool call was refused: what was asked is not done
    return code


def _run(options: ChatOptions, envr: Environment, words: list[str], notices: Notices,
         machine: JsonEvents | None) -> int:
    prompt = gather_prompt(words, envr, notices)
    live = load_live_config(options, envr, notices)
    # Before any session opens: a prompt that can never be sent is kept nowhere.
    check_prompt_size(prompt, live.get().max_history_tokens)
    if machine is None:
        answer = make_answer_sink(envr.stdout, terminal=bool(envr.stdout_isatty), raw=options.raw,
                                  no_color=envr.no_color)
        screen: EngineEvents = ConsoleEvents(answer, notices)
    else:  # tool lines and notices stay on stderr; the answer goes into the JSON
        screen = FanOut(ConsoleEvents(NoAnswer(), notices), machine)
    # Memory learns from the argument only: piped text is material, never the user's teaching.
    return asyncio.run(_answer_once(options, envr, live, notices, screen, prompt, machine, " ".join(words).strip()))


class _WatchOnceToolsRun:
    """Starts a one-shot's config watcher at its first tool call: a tool loop can run long enough
    for a save to matter (SPEC §3); a plain answer, however slow the machine, never imports
    watchfiles. Until then the check at each phase boundary covers a save."""

    def __init__(self) -> None:
        self.session: ChatSession | None = None

    def on_tool(self, name: str, arguments: str, result: object) -> None:
        if self.session is not None and self.session.config_watcher is not None:
            self.session.config_watcher.start()  # a second call does nothing


async def _answer_once(options: ChatOptions, envr: Environment, live: LiveConfig, notices: Notices,
                       screen: EngineEvents, prompt: str, machine: JsonEvents | None = None,
                       typed: str = "") -> int:
    watch = _WatchOnceToolsRun()
    session = await open_session(options, envr, live, notices, FanOut(screen, watch))
    watch.session = session
    # Text already written to a pipe or file cannot be taken back: no retry after it (json
    # writes nothing before the end, so it may retry).
    session.engine.retry_after_partial = bool(envr.stdout_isatty) or (machine is not None and not machine.streams)
    if machine is not None:
        spec = session.gateways.spec_for(live.get())
        machine.start(session_id=session.ref.id, model=spec.model, provider=spec.name, mode=live.get().mode,
                      cwd=str(envr.cwd), permission_mode=session.gate.mode() if session.gate else "default")
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        if session.end.ran:
            session.end.hurry()  # already ending: cut the memory flush short (it is spooled first)
        elif task is not None:
            task.cancel()  # end through the same path as Ctrl-C

    for sig in _ENDING_SIGNALS:
        loop.add_signal_handler(sig, on_signal)
    # The memory server starts first; a prompt's recall waits for it (bounded). The provider's
    # backend is imported meanwhile: on the loop once the recall is on the wire (the native one,
    # tens of ms: ChatSession.import_backend_now), on a thread when the start is cold
    # (ChatSession.prewarm_if_memory_starting); litellm beside a warm server, at the request.
    session.start(watch_config=False)  # the watcher waits for a tool call (_WatchOnceToolsRun)
    if session.memory is not None and session.memory.runtime.spec is not None:
        session.memory.injector.while_asking = session.import_backend_now
        loop.call_later(COLD_START_AFTER_S, session.prewarm_if_memory_starting)
    try:
        await session.run_prompt(prompt, typed=typed)
        return 1 if session.gate is not None and session.gate.refusals else 0  # a refused tool: what was asked is not done
    except asyncio.CancelledError:
        session.transcript.notice("interrupted")
        raise KeyboardInterrupt from None
    except Exception as exc:
        session.transcript.error(str(exc))
        raise
    finally:
        # The handlers stay for the end (a signal now only hurries it), and Ctrl-C joins them:
        # the default handler would raise KeyboardInterrupt in the middle of the end.
        with ending_signals(loop, session.end.hurry):
            try:
                await session.end.run()
            finally:
                for sig in _ENDING_SIGNALS:
                    loop.remove_signal_handler(sig)
