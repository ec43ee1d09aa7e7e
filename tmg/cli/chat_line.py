"""The chat command (``tmg [OPTIONS] [PROMPT...]``) read and run without typer.

A one-shot and ``tmg -t`` are the hottest paths, and typer's first command invocation imports
pydantic through its adapters (~90 ms, more than tmg's own part of a one-shot). The chat
command's options are few and plain, so the usual command lines are read here, by click's rules
for them. Anything else (``-h``/``--help``, ``--version``, combined short flags, a missing or
dash-led value, an unknown option) is left to typer (:mod:`tmg.cli.chat`), which owns the help
text and every usage error. tests/cli/test_chat_line.py keeps the two option tables equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from tmg.session.options import ChatOptions

# Option name -> field, for the options taking a value and for the flags.
VALUE_OPTIONS = {"-c": "config_path", "--config": "config_path", "--mode": "mode", "-m": "model", "--model": "model",
                 "--permissions": "permissions",
                 # -- issue 25, the scripting contract --
                 "--output-format": "output_format", "--max-turns": "max_turns", "--max-budget-usd": "max_budget_usd"}
OUTPUT_FORMATS = ("text", "json", "stream-json")  # --output-format (tmg.ui.json_events writes the JSON ones)
# The values that are numbers, with the least each may be: anything else is typer's usage error.
_NUMBERS = {"max_turns": (int, 1), "max_budget_usd": (float, 0.0)}
FLAGS = {"--new": "new", "-r": "raw", "--raw": "raw", "-t": "transcript", "--transcript": "transcript",
         "--json": "as_json", "--debug": "debug"}


@dataclass(frozen=True)
class ChatLine:
    """One chat command line: the session's options, the prompt's words and the switches."""

    options: ChatOptions
    words: tuple[str, ...] = ()
    transcript: bool = False
    as_json: bool = False
    debug: bool = False
    output_format: str = "text"  # --output-format: text, json or stream-json (a one-shot's stdout)


def parse_chat_line(args: Sequence[str]) -> ChatLine | None:
    """``args`` as a chat command line, or None for typer to read (see the module's docstring)."""
    values: dict[str, object] = {}
    flags: set[str] = set()
    words: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":  # the rest is the prompt, whatever it looks like
            words.extend(args[i + 1:])
            break
        if not arg.startswith("-") or arg == "-":
            words.append(arg)
        else:
            name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
            if name in VALUE_OPTIONS:
                if not eq:
                    if i + 1 == len(args) or args[i + 1].startswith("-"):
                        return None
                    i += 1
                    value = args[i]
                field = VALUE_OPTIONS[name]
                if field in _NUMBERS:
                    kind, least = _NUMBERS[field]
                    try:
                        number = kind(value)
                    except ValueError:
                        return None
                    if not number >= least:  # typer says what is wrong with it
                        return None
                    values[field] = number
                else:
                    values[field] = value  # given twice: the last one counts, as in click
            elif name in FLAGS and not eq:
                flags.add(FLAGS[name])
            else:
                return None
        i += 1
    output_format = str(values.pop("output_format", "text"))
    options = ChatOptions(new="new" in flags, raw="raw" in flags, **values)  # type: ignore[arg-type]
    return ChatLine(options, tuple(words), "transcript" in flags, "as_json" in flags, "debug" in flags, output_format)


def run_chat(line: ChatLine) -> int:
    """Read a transcript back, start the interactive chat, or answer one prompt."""
    from tmg.environment import Environment

    envr = Environment(debug_flag=line.debug)  # --debug turns on every debug line, as TMG_DEBUG=1 does
    permissions = line.options.permissions
    if permissions is not None:
        from tmg.config.model import PERMISSION_MODES
        from tmg.errors import UsageError

        if permissions not in PERMISSION_MODES:
            raise UsageError(f"--permissions {permissions!r} is not a mode; use one of: {', '.join(PERMISSION_MODES)}")
    budget = line.options.max_budget_usd
    if budget is not None and not math.isfinite(budget):
        from tmg.errors import UsageError

        raise UsageError(f"--max-budget-usd {budget} is not an amount; give dollars, e.g. --max-budget-usd 0.50")
    if line.output_format != "text":
        _check_one_shot_only(line, envr.interactive)
    if line.transcript:
        from tmg.cli.transcript import show_transcript

        return show_transcript(line.options, envr, " ".join(line.words) or None, as_json=line.as_json)
    if line.as_json:
        from tmg.errors import UsageError

        raise UsageError("--json only goes with -t (e.g. `tmg -t --json`)")
    if not line.words and envr.interactive:
        from tmg.cli.repl_entry import start_repl

        return start_repl(line.options, envr)
    from tmg.cli.oneshot import run_oneshot

    return run_oneshot(line.options, envr, list(line.words), output_format=line.output_format)


def _check_one_shot_only(line: ChatLine, interactive: bool) -> None:
    """--output-format is a one-shot's: a usage error with -t, or where the chat would start."""
    from tmg.errors import UsageError

    if line.output_format not in OUTPUT_FORMATS:
        raise UsageError(f"--output-format {line.output_format!r} is not a format; use one of: "
                         f"{', '.join(OUTPUT_FORMATS)}")
    if line.transcript:
        raise UsageError("--output-format goes with a one-shot, not -t (for a session as JSON: tmg -t --json)")
    if not line.words and interactive:
        raise UsageError(f"--output-format {line.output_format} is for a one-shot: give a prompt "
                         f'(tmg --output-format {line.output_format} "question") or pipe one in')
