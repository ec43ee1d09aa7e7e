"""The command line. Kept light: ``--help``, ``--version`` and ``-t`` never import litellm or mcp."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``tmg`` console script."""
    from tmg.cli.errors import run_guarded

    args = sys.argv[1:] if argv is None else list(argv)
    bad = _not_utf8(args)
    if bad is not None:
        from tmg.errors import UsageError

        def refuse() -> None:
            raise UsageError(bad)

        run_guarded(refuse)
    if args == ["--version"]:  # the commonest probe of all needs no parser
        from tmg import __version__

        print(f"tmg {__version__}")
        return
    debug = "--debug" in args
    if "-t" in args or "--transcript" in args:
        fast = _parse_transcript_args(args)
        if fast is not None:
            from tmg.cli.transcript import show_transcript
            from tmg.environment import Environment

            options, session, as_json = fast
            run_guarded(lambda: show_transcript(options, Environment(debug_flag=debug), session, as_json),
                        debug=debug)
    from tmg.cli.chat import app, chat
    from tmg.cli.route import first_word, subcommand_args, subcommand_names, value_options

    takes_value = value_options(chat)
    at = first_word(args, takes_value)
    prompt_like = ""
    if at is not None:
        from tmg.cli import admin

        routed = subcommand_args(args, subcommand_names(admin.app), takes_value)
        if routed is not None:
            if debug:  # every subcommand's Environment reads it, whatever options it declares
                import os

                os.environ["TMG_DEBUG"] = "1"
            app, prompt_like, args = admin.app, " ".join(args[at:]), routed
    run_guarded(lambda: _with_prompt_hint(app, args, prompt_like), debug=debug)


def _with_prompt_hint(app, args: list[str], prompt_like: str):
    """Run ``app``; a subcommand given extra words says how to send them as a prompt instead."""
    try:
        return app(args=args, prog_name="tmg", standalone_mode=False)
    except Exception as exc:
        message = getattr(exc, "message", "")
        if prompt_like and isinstance(message, str) and message.startswith("Got unexpected extra argument"):
            exc.message = f"{message}; to ask the model instead, put the prompt after --: tmg -- {prompt_like}"
        raise


def _not_utf8(args: list[str]) -> str | None:
    """The usage error for the first argument that is not UTF-8 text, else None.

    Python hands such bytes on as lone surrogates, which fail wherever text is encoded again
    (the prompt sent to a provider, the history). A config path may be any bytes: it is only
    ever used as a path.
    """
    for i, arg in enumerate(args):
        if i and args[i - 1] in ("-c", "--config") or arg.startswith("--config="):
            continue
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(arg)[:60].decode("utf-8", "backslashreplace")
            return (f"argument {i + 1} is not UTF-8 text ('{shown}'); pass arguments as UTF-8 "
                    "(check the terminal's encoding and LANG)")
    return None


def _parse_transcript_args(args: list[str]):
    """``tmg -t [SESSION] [--json] [--mode M] [-c PATH] [-r]`` without typer.

    Reading a transcript is the hottest read-only path, and typer's first command invocation
    imports pydantic (about 60 ms). Anything unusual returns None and goes through typer,
    which owns the full option surface and its error messages.
    """
    import argparse

    from tmg.cli.options import ChatOptions

    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    parser.add_argument("-t", "--transcript", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--mode")
    parser.add_argument("-c", "--config")
    parser.add_argument("-r", "--raw", action="store_true")
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("session", nargs="?")
    try:
        parsed, unknown = parser.parse_known_args(args)
    except (argparse.ArgumentError, SystemExit):
        return None
    if unknown or not parsed.transcript:
        return None
    options = ChatOptions(config_path=parsed.config, mode=parsed.mode, raw=parsed.raw)
    return options, parsed.session, parsed.json
