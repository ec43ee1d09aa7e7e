"""Turning every failure into one clear line and the exit code SPEC §1 gives it."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Callable

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _say(text: str) -> None:
    try:
        sys.stderr.write(f"tmg: error: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def run_guarded(body: Callable[[], Any], debug: bool = False) -> None:
    """Run the CLI body; exit with the right code, a traceback only with --debug/TMG_DEBUG."""
    import typer

    from tmg.errors import TmgError

    debug = debug or os.environ.get("TMG_DEBUG", "") not in ("", "0", "false")
    code = EXIT_OK
    try:
        result = body()
        code = result if isinstance(result, int) else EXIT_OK
    except typer.Exit as exc:
        code = exc.exit_code
    except typer.Abort:
        code = EXIT_INTERRUPTED
    except typer.TyperException as exc:  # typer's own usage errors (unknown option, bad value)
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        else:
            _say(str(exc))
        code = getattr(exc, "exit_code", EXIT_USAGE)
    except KeyboardInterrupt:
        sys.stderr.write("\ntmg: interrupted\n")
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`tmg -t | head`): not an error worth a line.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_OK
    except Exception as exc:
        from tmg.llm.gateway import GatewayError

        if isinstance(exc, (TmgError, GatewayError)):
            _say(str(exc))
            code = getattr(exc, "exit_code", EXIT_FAILURE)
        else:  # a bug: still one line, the traceback behind --debug
            _say(f"internal error: {type(exc).__name__}: {exc} (run again with --debug for details)")
            code = EXIT_FAILURE
        if debug:
            traceback.print_exc()
    sys.exit(code)
