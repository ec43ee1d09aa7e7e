"""Slash commands: what exists, how an entry is parsed, and a suggestion for a typo.

Parsing decides only *what* was asked; :mod:`tmg.repl.actions` carries it out. An entry that
starts with ``/`` is always a command (an unknown one gets a suggestion, never a model call);
``//text`` sends ``/text`` to the model.
"""

from __future__ import annotations

import difflib
import textwrap
from dataclasses import dataclass, field


@dataclass(frozen=True)
class CommandSpec:
    name: str
    usage: str
    help: str
    aliases: tuple[str, ...] = ()


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("help", "/help", "this list"),
    CommandSpec("new", "/new", "archive this session and start a new one"),
    CommandSpec("mode", "/mode [NAME]", "switch to mode NAME (its current session), or show the mode"),
    CommandSpec("model", "/model [NAME]", "use model NAME (or a provider name) from the next prompt on"),
    CommandSpec("compact", "/compact [FOCUS]", "summarise older turns now; FOCUS says what the summary should keep"),
    CommandSpec("cost", "/cost", "tokens and cost of this session so far"),
    CommandSpec("config", "/config", "the resolved config, secrets masked"),
    CommandSpec("transcript", "/transcript", "print this session's transcript"),
    CommandSpec("memory", "/memory [forget N|add TEXT]", "what went with the last request and why, learning "
                "tier, write health; forget N forgets item N (or an id); add TEXT teaches an instruction"),
    CommandSpec("permissions", "/permissions [revoke N|RULE]", "the permission mode, rules and saved "
                "\"always\" decisions; revoke one"),
    CommandSpec("skills", "/skills", "the skills, where each came from, which are active; "
                "/NAME [request] activates skill NAME"),
    CommandSpec("mcp", "/mcp [reconnect NAME]", "the MCP servers: status (and why), transport, tools, whether "
                "warm; /mcp reconnect NAME starts one afresh"),
    CommandSpec("rewind", "/rewind [N]", "take back the last N prompts: their file changes, what the model sees, "
                "what memory learned from them; without N, lists the recent prompts to choose from"),
    CommandSpec("plan", "/plan [off|PROMPT]", "plan mode: only reads run until you approve the model's plan; "
                "PROMPT is asked in it; off goes back to the mode before"),
    CommandSpec("exit", "/exit", "end the session (also Ctrl-D)", aliases=("quit",)),
)

_BY_NAME = {alias: c for c in COMMANDS for alias in (c.name, *c.aliases)}


@dataclass(frozen=True)
class Command:
    """A parsed command: ``name`` is canonical (``quit`` becomes ``exit``); ``arg`` is stripped."""

    name: str
    arg: str = ""


@dataclass(frozen=True)
class UnknownCommand:
    typed: str
    suggestions: tuple[str, ...]
    arg: str = field(default="", compare=False)  # what followed the word (a skill's /NAME takes a request)

    def message(self) -> str:
        if not self.suggestions:
            return f"unknown command /{self.typed} (/help lists them)"
        options = [f"/{s}" for s in self.suggestions]
        either = ", ".join(options[:-1]) + " or " + options[-1] if len(options) > 1 else options[0]
        return f"unknown command /{self.typed}: did you mean {either}? (/help lists them)"


@dataclass(frozen=True)
class Prompt:
    text: str


@dataclass(frozen=True)
class McpPrompt:
    """`/mcp__SERVER__PROMPT args`: an MCP server's prompt, filled in and sent as the prompt."""

    server: str
    prompt: str
    arg: str = ""


Entry = Command | UnknownCommand | Prompt | McpPrompt | None


def names() -> list[str]:
    """Every name a command answers to, for completion."""
    return sorted(_BY_NAME)


def suggest(typed: str) -> tuple[str, ...]:
    """Commands ``typed`` likely meant: those it begins, else the closest name (a typo)."""
    typed = typed.lower()
    prefixed = {_BY_NAME[n].name for n in _BY_NAME if n.startswith(typed)} if typed else set()
    if prefixed:
        return tuple(sorted(prefixed))
    close = difflib.get_close_matches(typed, list(_BY_NAME), n=1, cutoff=0.6)
    return (_BY_NAME[close[0]].name,) if close else ()


def parse(entry: str) -> Entry:
    """What the user asked for: a command, an unknown command, a prompt, or nothing (blank)."""
    text = entry.strip()
    if not text:
        return None
    if text.startswith("//"):
        return Prompt(entry.strip()[1:])
    if not text.startswith("/"):
        return Prompt(entry.strip())
    word, _, arg = text[1:].partition(" ")
    if "\n" in word:
        word, _, rest = word.partition("\n")
        arg = (rest + " " + arg).strip()
    if word.startswith("mcp__") and word.count("__") >= 2:
        server, _, prompt = word[len("mcp__"):].partition("__")
        if server and prompt:
            return McpPrompt(server, prompt, arg.strip())
    spec = _BY_NAME.get(word.lower())
    if spec is None:
        return UnknownCommand(word, suggest(word), arg.strip())
    return Command(spec.name, arg.strip())


def help_lines(columns: int = 80) -> list[str]:
    return two_columns([(c.usage, c.help) for c in COMMANDS], columns)


def two_columns(rows: list[tuple[str, str]], columns: int) -> list[str]:
    """``name  what`` rows for /help, the descriptions wrapped at words under themselves, so a
    terminal ``columns`` wide never breaks a word."""
    width = max(len(name) for name, _ in rows)
    indent = " " * (2 + width + 2)
    lines = []
    for name, what in rows:
        first, *more = textwrap.wrap(what, max(20, columns - len(indent))) or [""]
        lines.append(f"  {name:<{width}}  {first}")
        lines.extend(indent + line for line in more)
    return lines
