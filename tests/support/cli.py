"""The command line run in this process: ``tmg.cli.main(argv)`` with an injected environment,
cwd and stdin, its exit code, stdout and stderr captured (httpie's ``http()`` helper is the model).

A ``tmg`` subprocess costs ~0.65 s before it does anything (the interpreter, litellm's and the
SDK's imports); most e2e checks of exit codes, stderr lines and refusals need none of what a real
process adds. Whatever a process would give each run afresh is given afresh here:

- the environment (``os.environ`` is replaced for the run, then restored), the cwd, ``sys.argv``;
- stdin (a real pipe holding the text, as `echo text | tmg` gives; none: /dev/null, as the
  subprocess runner gives), stdout and stderr (UTF-8, what the user sees);
- signal handlers and the wakeup fd, the umask, the warning filters; atexit functions registered
  during the run run at its end, as at a process's exit, and never reach the test process's own;
- the module-level state of tmg that a process starts without (``_PROCESS_STATE`` below: found by
  grepping tmg/ for ``lru_cache``/``functools.cache``, module globals assigned at run time, and
  ``os.environ`` reads at import: there are none of those);
- no thread the run started may outlive it (a process's exit would have ended it): one that does
  fails the run, naming it.

What it cannot give, and what stays a subprocess test therefore: the import set and fast paths
(e2e/test_fast_paths.py), kill -9 and signals from outside, a terminal (tmux), stdin that is a
tty or never ends, and anything where the process's lifetime is the point (brokers, servers
outliving it).
"""

from __future__ import annotations

import asyncio
import atexit
import io
import os
import signal
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Mapping, Sequence

@dataclass
class Result:
    code: int
    out: str
    err: str


class RunTimedOut(BaseException):
    """The run took longer than its bound (a BaseException: tmg's own handlers must not eat it)."""


def _reset_process_state() -> None:
    """What a fresh ``tmg`` process starts without: each module's per-process memory (only the
    modules already imported: one not imported yet starts fresh anyway)."""
    for module, reset in _PROCESS_STATE:
        loaded = sys.modules.get(module)
        if loaded is not None:
            reset(loaded)


def _clear(name: str) -> Callable[[object], None]:
    return lambda module: getattr(module, name).clear()


def _cache_clear(name: str) -> Callable[[object], None]:
    return lambda module: getattr(module, name).cache_clear()


def _new_redactor(module) -> None:
    module._PROCESS = module.Redactor()  # the secrets of the configs *this* run loaded


def _no_options(module) -> None:
    module.hand_over(None)


# (module, how to forget what it learned in an earlier run). Pure functions of their arguments
# (tmg.permissions' lru_caches, the YAML loader class, tmg.tools.web_markdown's import) need none.
_PROCESS_STATE: tuple[tuple[str, Callable[[object], None]], ...] = (
    ("tmg.redaction", _new_redactor),
    ("tmg.cli.given", _no_options),
    ("tmg.broker.paths", _cache_clear("fingerprint")),  # stats the sources: a test may touch them
    ("tmg.llm.local_probe", _clear("_found")),  # the servers found on the loopback ports
    ("tmg.llm.select", _clear("_prewarmed")),
    ("tmg.tools.sandbox", _clear("_PROBED")),  # depends on PATH and the tools installed
    ("tmg.context.tokens", _clear("_known")),
    ("tmg.llm.pricing", _clear("_entries")),
)


def _stdin(text: str | bytes | None) -> tuple[IO[str], threading.Thread | None]:
    """What the run reads as stdin: /dev/null for none, else a real pipe (tmg reads a pipe's fd)
    that a thread fills and closes, as the writing end of a shell pipe would."""
    if text is None:
        return open(os.devnull, encoding="utf-8"), None
    data = text.encode("utf-8", errors="surrogateescape") if isinstance(text, str) else text
    read_end, write_end = os.pipe()

    def write() -> None:
        try:
            with open(write_end, "wb") as pipe:
                pipe.write(data)
        except BrokenPipeError:
            pass  # the run ended without reading it all, as a process may

    writer = threading.Thread(target=write, name="stdin-writer", daemon=True)
    writer.start()
    return open(read_end, encoding="utf-8"), writer


def _captured() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)


def _read(stream: io.TextIOWrapper) -> str:
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", errors="replace")


def _catchable_signals() -> list[signal.Signals]:
    return [s for s in signal.Signals if s not in (signal.SIGKILL, signal.SIGSTOP)]


def run_tmg(args: Sequence[str], *, env: Mapping[str, str], cwd: Path, stdin: str | bytes | None = None,
            timeout: float = 60, thread_grace: float = 5.0) -> Result:
    """``tmg ARGS`` run in this process as a subprocess would run it (see the module's docstring);
    a thread it started has ``thread_grace`` seconds after it to end."""
    from tmg import cli
    from tmg.cli import errors

    if threading.current_thread() is not threading.main_thread():  # signals and os.environ are the process's
        raise RuntimeError("run_tmg runs tmg on the main thread only; run a subprocess from a thread")
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_signals = {s: signal.getsignal(s) for s in _catchable_signals()}
    stdin_stream, stdin_writer = _stdin(stdin)
    threads_before = set(threading.enumerate())
    exit_funcs: list[tuple[Callable, tuple, dict]] = []
    real_register, real_unregister = atexit.register, atexit.unregister

    def register(func, *a, **kw):
        exit_funcs.append((func, a, kw))
        return func

    def unregister(func):
        exit_funcs[:] = [entry for entry in exit_funcs if entry[0] is not func]

    def too_long(signum, frame):
        raise RunTimedOut(f"tmg {' '.join(args)} ran longer than {timeout} s")

    out, err = _captured(), _captured()
    code = 0
    saved_umask = os.umask(0o022)
    os.umask(saved_umask)
    try:
        _reset_process_state()
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv = ["tmg", *args]
        sys.stdin, sys.stdout, sys.stderr = stdin_stream, out, err
        atexit.register, atexit.unregister = register, unregister
        errors.FAST_EXIT = False
        signal.signal(signal.SIGALRM, too_long)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            with warnings.catch_warnings():  # the warning filters a run sets (litellm's) are its own
                cli.main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _run_exit_functions(exit_funcs)
    finally:
        errors.FAST_EXIT = True
        os.umask(saved_umask)
        atexit.register, atexit.unregister = real_register, real_unregister
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        stdin_stream.close()
        if stdin_writer is not None:
            stdin_writer.join(5)
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in saved_signals.items():
            if handler is not None:
                signal.signal(sig, handler)
        signal.set_wakeup_fd(-1)
        asyncio.set_event_loop(None)
    _no_thread_outlives_the_run(threads_before, args, thread_grace)
    return Result(code, _read(out), _read(err))


def _run_exit_functions(exit_funcs: list[tuple[Callable, tuple, dict]]) -> None:
    """As at a process's exit: the last registered first; one that raises is said on stderr (the
    run's) and the others still run."""
    for func, a, kw in reversed(exit_funcs):
        try:
            func(*a, **kw)
        except Exception:  # noqa: BLE001 - Python's exit says it and goes on, so does this
            import traceback

            sys.stderr.write(f"Exception ignored in atexit callback {func!r}:\n{traceback.format_exc()}")


def _no_thread_outlives_the_run(before: set[threading.Thread], args: Sequence[str], bound: float) -> None:
    stray = [t for t in threading.enumerate() if t not in before]
    for thread in stray:
        thread.join(bound / max(1, len(stray)))
    alive = [t.name for t in stray if t.is_alive()]
    if alive:
        raise AssertionError(f"tmg {' '.join(args)}: threads outlived the run (a process's exit would have "
                             f"ended them): {', '.join(alive)}")
