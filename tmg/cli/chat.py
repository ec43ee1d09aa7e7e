"""``tmg [PROMPT...]``: one-shot, interactive chat, or ``-t`` to read a session back.

This is the chat command's full surface for typer: its help, ``--version`` and its usage
errors. The usual command lines skip it (:mod:`tmg.cli.chat_line`, which also runs them).
"""

from __future__ import annotations

from typing import List, Optional

import typer

from tmg import __version__
from tmg.cli.chat_line import ChatLine, run_chat
from tmg.session.options import ChatOptions

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)

HELP = """Chat with an LLM from the shell, with automatic long-term memory.

\b
  tmg                          interactive chat (on a terminal)
  tmg "question"               one answer on stdout, then exit
  cat f | tmg "summarise"      piped text is appended to the question
  tmg -t [SESSION]             print a session's transcript
  tmg sessions | config | doctor | memory | skills | mcp
  tmg compact                  summarise older turns of the mode's session now
  tmg rewind [N]               take back the last N prompts: their files, what
                               the model sees, what memory learned (--list)
  tmg permissions [--revoke N|RULE]  saved "always" answers to tool prompts
  tmg trust [PATH]             let PATH's (default: here) tmg.yaml run its MCP
                               servers and use its providers' URL/HEADERS/API_KEY
                               (tmg trust --list, tmg trust --revoke [PATH])

Options may come before a subcommand (tmg -c f.yaml doctor). A first word
that is a subcommand's name runs it; to ask the model that word, put the
prompt after --:  tmg -- doctor

Exit codes: 0 ok, 1 failure, 2 usage error, 130 interrupted.
"""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tmg {__version__}")
        raise typer.Exit()


@app.command(help=HELP, context_settings={"help_option_names": ["-h", "--help"]})
def chat(
    prompt: Optional[List[str]] = typer.Argument(None, help="The question (or, with -t, a session id).", show_default=False),
    config: Optional[str] = typer.Option(None, "-c", "--config", help="Config file (else TMG_CONFIG, ./tmg.yaml, ~/.config/tmg/config.yaml)."),
    new: bool = typer.Option(False, "--new", help="Start a new session instead of resuming the mode's current one."),
    mode: Optional[str] = typer.Option(None, "--mode", help="Mode: persona and session namespace."),
    model: Optional[str] = typer.Option(None, "-m", "--model", help="Model id (litellm style) or provider name."),
    raw: bool = typer.Option(False, "-r", "--raw", help="Plain text output, no Markdown rendering."),
    permissions: Optional[str] = typer.Option(None, "--permissions", metavar="MODE",
                                              help="Tool permissions: default, accept-edits, read-only, plan or yolo (else PERMISSIONS.MODE)."),
    transcript: bool = typer.Option(False, "-t", "--transcript", help="Print the current (or given) session's transcript."),
    as_json: bool = typer.Option(False, "--json", help="With -t: the session's messages as JSON."),
    debug: bool = typer.Option(False, "--debug", help="Show details: tracebacks on errors, memory's debug lines (as TMG_DEBUG=1)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> int:
    options = ChatOptions(config_path=config, new=new, mode=mode, model=model, raw=raw, permissions=permissions)
    return run_chat(ChatLine(options, tuple(prompt or ()), transcript, as_json, debug))
