"""What each slash command does. Parsing and suggestions live in :mod:`tmg.repl.commands`."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Awaitable, Callable, Protocol

from tmg.errors import TmgError
from tmg.repl import commands
from tmg.repl.input import KEYS_HELP
from tmg.repl.screen import ReplScreen
from tmg.repl.usage import UsageMeter, stored_tally

if TYPE_CHECKING:
    from tmg.compose import ChatOptions, ChatSession
    from tmg.mcp.server_set import McpToolServers


class Repl(Protocol):
    """What a slash command acts on: the REPL's session, options and screen (the loop's Repl)."""

    screen: ReplScreen
    session: ChatSession | None
    options: ChatOptions
    meter: UsageMeter
    mcp_servers: McpToolServers
    done: bool
    mode_before_plan: str | None

    async def switch(self, options: ChatOptions) -> bool:
        """Make a session for ``options`` the current one; False (said on the screen) on failure."""
        ...

    def prewarm(self, session: ChatSession) -> None: ...


MEMORY_OFF = "memory: not configured (no memory server in this session; see MEMORY in `tmg config`)"


async def run_command(repl: Repl, command: commands.Command) -> None:
    await _HANDLERS[command.name](repl, command.arg)


async def _help(repl: Repl, _arg: str) -> None:
    say, columns = repl.screen.say, repl.screen.columns()
    say("commands:")
    for line in commands.help_lines(columns):
        say(line)
    say("keys:")
    for line in commands.two_columns(list(KEYS_HELP), columns):
        say(line)
    say("  //text sends text that starts with a slash")


async def _new(repl: Repl, _arg: str) -> None:
    old = repl.session
    if await repl.switch(replace(repl.options, new=True)):
        repl.screen.info(f"new session {repl.session.ref.id} (mode {repl.session.ref.mode}); "
                         f"the previous one is kept as {old.ref.id if old else '-'}")


async def _mode(repl: Repl, arg: str) -> None:
    current = repl.session.ref.mode
    if not arg:
        repl.screen.say(f"mode: {current} (switch with /mode NAME)")
        return
    if arg == current:
        repl.screen.info(f"already in mode {current}")
        return
    if await repl.switch(replace(repl.options, mode=arg, new=False)):
        count = len(repl.session.engine.history.messages)
        what = f"resumed its session ({count} messages)" if count else "a new session"
        repl.screen.info(f"mode {arg}: {what} {repl.session.ref.id}")


async def _model(repl: Repl, arg: str) -> None:
    session = repl.session
    config = session.live.get()
    if not arg:
        spec = session.gateways.spec_for(config)
        repl.screen.say(f"model: {spec.model} (provider {spec.name}); change it with /model NAME")
        return
    previous = repl.options.model
    session.gateways.set_model(arg)
    try:
        spec = session.gateways.spec_for(config)
    except TmgError as exc:
        session.gateways.set_model(previous)
        repl.screen.error(str(exc))
        return
    repl.options = replace(repl.options, model=arg)  # /new and /mode keep it
    repl.prewarm(session)
    repl.screen.info(f"model {spec.model} (provider {spec.name}) from the next prompt on")


async def _compact(repl: Repl, arg: str) -> None:
    try:
        line = await repl.session.engine.compact(arg)
    except TmgError as exc:
        repl.screen.error(str(exc))
        return
    repl.session.transcript.notice(line)
    (repl.screen.info if line.startswith("compacted") else repl.screen.error)(line)


async def _cost(repl: Repl, _arg: str) -> None:
    session = repl.session
    total = stored_tally(session.engine.history.messages)
    repl.screen.say(f"session {session.ref.id}: {_calls(total.calls)}, {total.line()}")
    if total.unpriced:
        repl.screen.say(f"  {total.unpriced} of them on models without a known price")
    run = repl.meter.run
    if run.calls != total.calls:
        repl.screen.say(f"this run of tmg: {_calls(run.calls)}, {run.line()}")


def _calls(n: int) -> str:
    return f"{n} model call" + ("" if n == 1 else "s")


async def _config(repl: Repl, _arg: str) -> None:
    from tmg.config.inspect import render_config

    repl.screen.say(render_config(repl.session.live.get()).rstrip("\n"))


async def _transcript(repl: Repl, _arg: str) -> None:
    path = repl.session.transcript.path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        repl.screen.error(f"cannot read the transcript {path}: {exc.strerror or exc}")
        return
    repl.screen.markdown(text)
    repl.screen.hint(f"transcript: {path}")


async def _memory(repl: Repl, arg: str) -> None:
    memory = getattr(repl.session, "memory", None)
    describe = getattr(memory, "describe", None)
    if describe is None:
        repl.screen.say(MEMORY_OFF)
        return
    verb, _, rest = arg.partition(" ")
    if verb == "forget":  # `/memory forget N|ID`: item N of the last request, or an id
        lines = await memory.forget(rest) if rest.strip() else ["say which: /memory forget N (see /memory) or an id"]
    elif verb == "add":  # `/memory add ...`: teach a standing instruction directly
        lines = await memory.add(rest) if rest.strip() else ["say what to remember: /memory add WORDS"]
    else:
        lines = await describe()
    for line in lines:
        repl.screen.say(line)


async def _permissions(repl: Repl, arg: str) -> None:
    gate = repl.session.gate
    verb, _, rest = arg.partition(" ")
    if verb == "revoke":
        if not rest.strip():
            repl.screen.error("say which decision: /permissions revoke N (the number listed) or the rule")
            return
        try:
            repl.screen.info(gate.store.revoke_line(rest.strip()))
        except TmgError as exc:
            repl.screen.error(str(exc))
        return
    if verb:
        repl.screen.error(f"unknown /permissions {verb}; use /permissions or /permissions revoke N|RULE")
        return
    try:
        lines = gate.describe()
    except TmgError as exc:  # a damaged decisions file
        repl.screen.error(str(exc))
        return
    for line in lines:
        repl.screen.say(line)
    repl.screen.hint("revoke a saved decision with /permissions revoke N (or the rule)")


async def _mcp(repl: Repl, arg: str) -> None:
    verb, _, name = arg.partition(" ")
    servers = repl.mcp_servers
    if verb == "reconnect":  # `/mcp reconnect NAME`: a new session over a new transport, now
        if not name.strip():
            repl.screen.error("usage: /mcp reconnect NAME")
            return
        repl.screen.say(await servers.reconnect(name.strip()))
        return
    if verb:
        repl.screen.error(f"unknown /mcp subcommand {verb!r} (/mcp, /mcp reconnect NAME)")
        return
    lines = servers.status_lines()
    for line in lines or ["no MCP tool servers in this session (MCP_SERVERS in `tmg config`)"]:
        repl.screen.say(line)


async def _exit(repl: Repl, _arg: str) -> None:
    repl.done = True


async def _skills(repl: Repl, _arg: str) -> None:
    from tmg.skills.listing import listing_lines

    skills = repl.session.skills
    if skills is None:
        repl.screen.say("skills: not available in this session")
        return
    catalog = skills.refresh()
    for line in listing_lines(catalog, list(skills.active), commands.names()):
        repl.screen.say(line)


def activate_skill(repl: Repl, name: str) -> bool:
    """``/NAME``: activate skill NAME for this session; False when there is no such skill."""
    skills = repl.session.skills
    if skills is None or skills.get(name) is None:
        return False
    outcome = skills.activate(name, "user")
    if outcome.status == "already":
        repl.screen.info(f"skill {name} is already active")
    else:
        repl.screen.info(f"skill {name} is active: its instructions go with every prompt of this session")
    return True


async def _rewind(repl: Repl, arg: str) -> None:
    from tmg.repl.asking import read_line
    from tmg.repl.rewind import rewind

    await rewind(repl.session, repl.screen, arg, read_line)


async def _plan(repl: Repl, arg: str) -> None:
    gate = repl.session.gate
    if gate is None:
        repl.screen.error("plan mode is not available in this session")
        return
    if arg == "off":
        if gate.mode() != "plan":
            repl.screen.info(f"not in plan mode (permissions: {gate.mode()})")
            return
        before = repl.mode_before_plan or "default"
        gate.set_mode(before, "/plan off")
        repl.screen.info(f"plan mode off: permissions {before}")
        return
    if gate.mode() != "plan":
        repl.mode_before_plan = gate.mode()
        gate.set_mode("plan", "/plan")
        repl.screen.info("plan mode: only reads run; the model proposes a plan for you to approve "
                         "(/plan off leaves it)")
    elif not arg:
        repl.screen.info("already in plan mode (/plan off leaves it)")
    # /plan PROMPT: the loop asks PROMPT next, as a prompt of its own (Ctrl-C stops it alone)


_HANDLERS: dict[str, Callable[[Repl, str], Awaitable[None]]] = {
    "help": _help, "new": _new, "mode": _mode, "model": _model, "compact": _compact, "cost": _cost,
    "config": _config, "transcript": _transcript, "memory": _memory, "permissions": _permissions, "exit": _exit,
    "skills": _skills, "mcp": _mcp, "rewind": _rewind, "plan": _plan,
}
assert set(_HANDLERS) == {c.name for c in commands.COMMANDS}, "every command needs a handler"
