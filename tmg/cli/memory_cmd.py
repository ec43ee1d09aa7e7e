"""``tmg memory ...``: looking after long-term memory from the command line.

`list`, `search`, `forget`, `pin` and `add` go through PLUR's own tools (plur_pin, plur_recall,
plur_timeline, plur_forget, plur_learn), started the way a chat starts the memory server. The
one exception: PLUR has no tool that forgets an episode, so `forget EP-...` removes it from
PLUR's episodes file under PLUR's own lock (tmg.memory.episodes). `status` and `stop` look after
the warm memory broker.
"""

from __future__ import annotations

from typing import Optional

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Long-term memory: what it holds, and the warm memory broker.", no_args_is_help=True)

ConfigOpt = typer.Option(None, "-c", "--config", help="Config file.")


@app.command()
def status() -> int:
    """The memory broker: pid, uptime, servers, calls served, store size."""
    from tmg.broker.control import probe, status_lines
    from tmg.cli.memory_status import one_per_store
    from tmg.environment import Environment

    envr = Environment()
    envr.stdout.write("".join(f"{line}\n" for line in status_lines(one_per_store(probe(envr.env)))))
    return 0


@app.command()
def stop() -> int:
    """Stop the memory broker (and the servers it keeps warm); the next run starts a new one."""
    from tmg.broker.control import stop as stop_broker
    from tmg.environment import Environment

    envr = Environment()
    pid = stop_broker(envr.env)
    envr.stdout.write("broker: not running\n" if pid is None else f"broker stopped (pid {pid})\n")
    return 0


@app.command("list")
def list_cmd(config: Optional[str] = ConfigOpt) -> int:
    """Your standing instructions (pinned engrams, injected for every prompt, with their scope),
    the latest episodes, and the store's size."""
    from tmg.memory.manage import list_memory

    return _run(config, lambda client, _config: list_memory(client))


@app.command()
def search(words: list[str] = typer.Argument(..., help="What to look for."),
           config: Optional[str] = ConfigOpt) -> int:
    """Engrams and episodes matching WORDS, with their ids."""
    from tmg.memory.manage import search_memory

    return _run(config, lambda client, conf: search_memory(client, " ".join(words), conf.memory.scope))


@app.command()
def forget(memory_id: str = typer.Argument(..., metavar="ID", help="An engram (ENG-...) or episode (EP-...) id."),
           config: Optional[str] = ConfigOpt) -> int:
    """Forget one memory by its id: an engram is retired (PLUR keeps its history), an episode removed."""
    from tmg.memory.manage import forget_memory

    return _run(config, lambda client, _config: forget_memory(client, memory_id))


@app.command()
def add(words: list[str] = typer.Argument(..., help="The instruction, in your words."),
        scope: Optional[str] = typer.Option(None, "--scope", help="Where it applies, e.g. project:NAME "
                                            "(default: MEMORY.SCOPE, else personal)."),
        config: Optional[str] = ConfigOpt) -> int:
    """Teach a standing instruction: kept in your words (secrets masked), pinned, injected for every prompt."""

    async def operation(client, conf):
        from tmg.memory.lock import WriteLock
        from tmg.memory.manage import add_memory
        from tmg.memory.scrub import make_scrubber
        from tmg.redaction import make_redactor

        where = conf.memory.scope if scope is None else scope
        outcome, _engram = await add_memory(client, " ".join(words), scope=where,
                                            scrub=make_scrubber(make_redactor(conf.secrets())), lock=WriteLock())
        return outcome

    return _run(config, operation)


@app.command()
def pin(engram_id: str = typer.Argument(..., metavar="ID", help="An engram id (see list or search)."),
        off: bool = typer.Option(False, "--off", help="Unpin instead."),
        config: Optional[str] = ConfigOpt) -> int:
    """Pin a memory (injected for every prompt, as your instruction), or unpin it with --off."""
    from tmg.memory.manage import pin_memory

    return _run(config, lambda client, _config: pin_memory(client, engram_id, not off))


@app.command("scope")
def scope(engram_id: str = typer.Argument(..., metavar="ID", help="An engram id (see list or search)."),
          where: str = typer.Argument(..., metavar="personal|project",
                                      help="personal: recalled in every project; project: only in this one."),
          config: Optional[str] = ConfigOpt) -> int:
    """Move a memory to your personal scope, or to the scope of the project you are in."""
    from tmg.environment import Environment
    from tmg.memory.rescope import move_memory
    from tmg.project import find_project

    project = find_project(Environment().cwd)
    return _run(config, lambda client, _scope: move_memory(client, engram_id, where.lower(), project))


def _run(config_path: Optional[str], operation) -> int:
    """Run `operation(client, config)` against the configured memory server; print its outcome."""
    import asyncio

    from tmg.environment import Environment

    envr = Environment()
    return asyncio.run(_with_client(config_path, envr, operation))


async def _with_client(config_path: Optional[str], envr, operation) -> int:
    from tmg.config.loader import load_config
    from tmg.memory.runtime import MemoryRuntime, memory_server_spec

    config, warnings = load_config(config_path, envr.env, envr.cwd)
    for w in warnings:
        envr.stderr.write(f"tmg: warning: {w}\n")
    spec = memory_server_spec(config)
    if spec is None:
        envr.stderr.write("tmg: memory is off (MEMORY.ENABLED false, or no memory server configured)\n")
        return 1
    entry = config.mcp_servers.get(config.memory.server)
    runtime = MemoryRuntime(spec, start_timeout=entry.timeout if entry else 15.0,
                            warn=lambda m: envr.stderr.write(f"tmg: warning: {m}\n"))
    runtime.start()
    try:
        client = await runtime.client(runtime.start_timeout)
        if client is None:
            envr.stderr.write(f"tmg: memory: the memory server could not be used ({runtime.describe()})\n")
            return 1
        outcome = await operation(client, config)
    finally:
        await runtime.close()
    out = envr.stdout if outcome.ok else envr.stderr
    prefix = "" if outcome.ok else "tmg: "
    out.write("".join(f"{prefix}{line}\n" for line in outcome.lines))
    return 0 if outcome.ok else 1
