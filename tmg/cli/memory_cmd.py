"""``tmg memory ...``: looking after long-term memory from the command line.

`list`, `search`, `forget` and `pin` go through PLUR's own tools (plur_pin, plur_recall,
plur_forget), started the way a chat starts the memory server; never by editing its files.
`status` and `stop` look after the warm memory broker.
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
    """Your standing instructions (pinned engrams, injected for every prompt) and the store's size."""
    from tmg.memory.manage import list_memory

    return _run(config, lambda client, _scope: list_memory(client))


@app.command()
def search(words: list[str] = typer.Argument(..., help="What to look for."),
           config: Optional[str] = ConfigOpt) -> int:
    """Memories matching WORDS, with their ids."""
    from tmg.memory.manage import search_memory

    return _run(config, lambda client, scope: search_memory(client, " ".join(words), scope))


@app.command()
def forget(engram_id: str = typer.Argument(..., metavar="ID", help="An engram id (see list or search)."),
           config: Optional[str] = ConfigOpt) -> int:
    """Retire one memory by its id (PLUR keeps its history)."""
    from tmg.memory.manage import forget_memory

    return _run(config, lambda client, _scope: forget_memory(client, engram_id))


@app.command()
def pin(engram_id: str = typer.Argument(..., metavar="ID", help="An engram id (see list or search)."),
        off: bool = typer.Option(False, "--off", help="Unpin instead."),
        config: Optional[str] = ConfigOpt) -> int:
    """Pin a memory (injected for every prompt, as your instruction), or unpin it with --off."""
    from tmg.memory.manage import pin_memory

    return _run(config, lambda client, _scope: pin_memory(client, engram_id, not off))


def _run(config_path: Optional[str], operation) -> int:
    import asyncio

    from tmg.cli.given import options_for
    from tmg.environment import Environment

    config_path = options_for(config_path=config_path).config_path  # `tmg -c work.yaml memory list` too
    envr = Environment()
    return asyncio.run(_with_client(config_path, envr, operation))


async def _with_client(config_path: Optional[str], envr, operation) -> int:
    import inspect

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
        result = operation(client, config.memory.scope)
        outcome = await result if inspect.isawaitable(result) else result
    finally:
        await runtime.close()
    out = envr.stdout if outcome.ok else envr.stderr
    prefix = "" if outcome.ok else "tmg: "
    out.write("".join(f"{prefix}{line}\n" for line in outcome.lines))
    return 0 if outcome.ok else 1
