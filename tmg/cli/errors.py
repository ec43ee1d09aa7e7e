"""Turning every failure into one clear line and the exit code SPEC §1 gives it."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
FAST_EXIT = True  # False when tmg runs inside another program (tests/support/cli.py): os._exit would end it too


def _redacted(text: str) -> str:
    """``text`` with the secrets of every config this process loaded masked (none loaded: as is)."""
    if "tmg.redaction" not in sys.modules:
        return text
    from tmg.redaction import process_redactor

    return process_redactor()(text)


def _say(text: str) -> None:
    try:
        sys.stderr.write(f"tmg: error: {_redacted(text)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def run_guarded(body: Callable[[], Any], debug: bool = False) -> None:
    """Run the CLI body; exit with the right code, a traceback only with --debug/TMG_DEBUG."""
    from tmg.errors import TmgError

    debug = debug or os.environ.get("TMG_DEBUG", "") not in ("", "0", "false")
    code = EXIT_OK
    try:
        result = body()
        code = result if isinstance(result, int) else EXIT_OK
    except KeyboardInterrupt:
        sys.stderr.write("\ntmg: interrupted\n")
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`tmg -t | head`): not an error worth a line.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_OK
    except Exception as exc:
        typer_code = _typer_outcome(exc)
        if typer_code is not None:
            code = typer_code
        elif isinstance(exc, TmgError) or _is_gateway_error(exc):
            _say(str(exc))
            code = exc.exit_code
        else:  # a bug: still one line, the traceback behind --debug
            _say(f"internal error: {type(exc).__name__}: {exc} (run again with --debug for details)")
            code = EXIT_FAILURE
        if debug and typer_code is None:
            import traceback  # only with --debug: it costs every start ~10 ms otherwise

            sys.stderr.write(_redacted(traceback.format_exc()))
    if FAST_EXIT and ("mcp" in sys.modules or "litellm" in sys.modules):
        _exit_now(code)
    sys.exit(code)


def _exit_now(code: int) -> None:
    """Exit without tearing every module down. With the mcp SDK or litellm loaded, Python's own
    finalization takes 0.1 to 0.2 s after the session end has closed and synced all tmg owns
    (quality.md P4). atexit handlers still run; only the module teardown is skipped."""
    import atexit

    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # a reader that went away: nothing left to tell it
        os._exit(code)


def _typer_outcome(exc: Exception) -> int | None:
    """The exit code for typer's own exceptions (exit, abort, usage errors), else None.

    typer is only consulted when it is already loaded: the ``-t`` fast path never imports it.
    """
    if "typer" not in sys.modules:
        return None
    import typer

    if isinstance(exc, typer.Exit):
        return exc.exit_code
    if isinstance(exc, typer.Abort):
        return EXIT_INTERRUPTED
    if isinstance(exc, typer.TyperException):  # unknown option, bad value: usage errors
        show = getattr(exc, "show", None)
        show() if show is not None else _say(str(exc))
        return getattr(exc, "exit_code", EXIT_USAGE)
    return None


def _is_gateway_error(exc: Exception) -> bool:
    if "tmg.llm.gateway" not in sys.modules:
        return False
    from tmg.llm.gateway import GatewayError

    return isinstance(exc, GatewayError)
