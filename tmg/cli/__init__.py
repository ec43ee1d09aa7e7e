"""The command line. Kept light: ``--help``, ``--version`` and ``-t`` never import litellm or mcp,
and the usual chat command lines (a one-shot, ``-t``) and the routing to a subcommand never import typer."""

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
    from tmg.cli.chat_line import VALUE_OPTIONS, optional_values, parse_chat_line, run_chat
    from tmg.cli.route import SUBCOMMANDS, first_word, split_subcommand, subcommand_args

    debug = "--debug" in args
    args = optional_values(args)  # `--resume [ID]`: its value made explicit for both parsers
    line = parse_chat_line(args)  # None: a line only typer reads (help, usage errors, rare forms)
    if line is not None and line.transcript:  # -t before routing: `tmg -t doctor` reads session "doctor"
        run_guarded(lambda: run_chat(line), debug=debug)
    split = split_subcommand(args, SUBCOMMANDS, VALUE_OPTIONS)
    if split is not None:
        if debug:  # every subcommand's Environment reads it, whatever options it declares
            os.environ["TMG_DEBUG"] = "1"
        from tmg.cli import admin

        before, routed = split
        # The options before the subcommand, read as the chat reads them; a line its parser
        # leaves to typer has them moved behind the subcommand, for typer to say what is wrong.
        given = parse_chat_line(before) if before else None
        if before and (given is None or given.words):
            given, routed = None, subcommand_args(args, SUBCOMMANDS, VALUE_OPTIONS) or routed
        from tmg.cli.given import hand_over

        hand_over(given.options if given is not None else None)
        prompt_like = " ".join(args[first_word(args, VALUE_OPTIONS):])
        run_guarded(lambda: _with_prompt_hint(admin.app, routed, prompt_like), debug=debug)
    if line is not None:
        run_guarded(lambda: run_chat(line), debug=debug)
    from tmg.cli.chat import app

    run_guarded(lambda: _with_prompt_hint(app, args, ""), debug=debug)


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
