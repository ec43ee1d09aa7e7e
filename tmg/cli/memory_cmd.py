"""``tmg memory ...``: looking after long-term memory from the command line.

`list`, `search`, `forget`, `pin` and `add` go through PLUR's own tools (plur_pin, plur_recall,
plur_timeline, plur_forget, plur_learn), started the way a chat starts the memory server. The
exceptions: PLUR has no tool that forgets an episode, so `forget EP-...` removes it from PLUR's
episodes file under PLUR's own lock (tmg.memory.episodes), and none that writes a file store,
so `share` and forgetting a shared item edit the repository's team file (tmg.memory.share).
`sync` keeps the store in a git remote through plur_sync (tmg.memory.sync). `status` and `stop`
look after the warm memory broker; `status` says how sync stands too.
"""

from __future__ import annotations

from typing import Optional

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Long-term memory: what it holds, and the warm memory broker.", no_args_is_help=True)

ConfigOpt = typer.Option(None, "-c", "--config", help="Config file.")


@app.command()
def status(config: Optional[str] = ConfigOpt) -> int:
    """The memory broker (pid, uptime, servers, calls served, store size) and the store's sync:
    its remote, ahead/behind, changes not yet synced, the last sync."""
    from tmg.broker.control import probe, status_lines
    from tmg.cli.memory_status import one_per_store
    from tmg.environment import Environment

    envr = Environment()
    broker = one_per_store(probe(envr.env))
    envr.stdout.write("".join(f"{line}\n" for line in status_lines(broker)))

    async def sync_lines(client, conf):
        from tmg.memory.manage import Outcome
        from tmg.memory.sync import status_lines as sync_status_lines, sync_status

        return Outcome(tuple(sync_status_lines(await sync_status(client), _record_at(conf, envr), conf.memory.sync)))

    # A status does not start a broker: through the running one, else the server spawned directly.
    return _run(config, sync_lines, envr, unless=_not_synced, direct=broker.status is None)


def _not_synced(conf, envr) -> list[str] | None:
    """The sync lines when the store is no repository (nothing to ask a server), else None."""
    from tmg.memory.sync import status_lines as sync_status_lines

    store = _store(conf)
    if store is None:
        return ["sync: memory is off (MEMORY.ENABLED false, or no memory server configured)"]
    if (store / ".git").exists():
        return None
    return sync_status_lines(None, _record_at(conf, envr), conf.memory.sync)


@app.command()
def sync(remote: Optional[str] = typer.Option(None, "--remote", metavar="URL",
                                              help="The git remote (default: MEMORY.SYNC.REMOTE, else the one "
                                                   "it syncs with); a private repository for personal."),
         shared: Optional[bool] = typer.Option(None, "--shared/--personal",
                                               help="What the remote is for (default: MEMORY.SYNC.TYPE): shared "
                                                    "takes only project/team engrams marked public."),
         config: Optional[str] = ConfigOpt) -> int:
    """Sync memory with its git remote through PLUR (commit, pull, push); the first time, set it up."""
    from tmg.environment import Environment
    from tmg.memory.sync_git import git_env

    envr = Environment()

    async def operation(client, conf):
        from tmg.memory.sync import sync_memory

        kind = conf.memory.sync.type if shared is None else ("shared" if shared else "personal")
        url = remote if remote is not None else conf.memory.sync.remote
        return await sync_memory(client, _store(conf), _record_at(conf, envr), url.strip(), kind)

    # A server of its own, with the user's ssh agent (PLUR runs git synchronously: the warm one
    # would freeze for every session meanwhile).
    return _run(config, operation, envr, direct=True, env=git_env(envr.env))


@app.command()
def share(engram_id: str = typer.Argument(..., metavar="ID", help="An engram id (see list or search)."),
          config: Optional[str] = ConfigOpt) -> int:
    """Move a memory of this project into the repository's team file (.plur/engrams.yaml), for
    teammates who trust their clone; commit the file to share it."""
    from tmg.environment import Environment

    envr = Environment()

    async def operation(client, conf):
        from tmg.memory.scrub import make_scrubber
        from tmg.memory.share import share_memory
        from tmg.redaction import make_redactor

        return await share_memory(client, engram_id, _project(envr), _home(envr), _trusted(envr),
                                  make_scrubber(make_redactor(conf.secrets())))

    return _run(config, operation, envr)


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
    """Your standing instructions (pinned engrams, injected for every prompt, with their scope;
    those shared with the team say from which repository file), the latest episodes, and the
    store's size."""
    from tmg.environment import Environment
    from tmg.memory.manage import list_memory

    envr = Environment()

    async def operation(client, conf):
        from tmg.memory.manage import Outcome

        problem = await _load_team(client, conf, envr)
        listed = await list_memory(client, _shared_from(envr))
        return listed if problem is None else Outcome((*listed.lines, problem), False)

    return _run(config, operation, envr)


@app.command()
def search(words: list[str] = typer.Argument(..., help="What to look for."),
           config: Optional[str] = ConfigOpt) -> int:
    """Engrams and episodes matching WORDS, with their ids."""
    from tmg.environment import Environment
    from tmg.memory.manage import search_memory

    envr = Environment()

    async def operation(client, conf):
        await _load_team(client, conf, envr)  # a failure to load it is `list`'s to say
        return await search_memory(client, " ".join(words), conf.memory.scope)

    return _run(config, operation, envr)


@app.command()
def forget(memory_id: str = typer.Argument(..., metavar="ID", help="An engram (ENG-...) or episode (EP-...) id."),
           config: Optional[str] = ConfigOpt) -> int:
    """Forget one memory by its id: an engram is retired (PLUR keeps its history), an episode
    removed, an item shared with the team removed from the repository's team file."""
    from tmg.environment import Environment
    from tmg.memory.manage import forget_memory

    envr = Environment()

    async def operation(client, _conf):
        from tmg.memory.share import unshare_memory

        unshared = await unshare_memory(memory_id, _project(envr))
        return unshared if unshared is not None else await forget_memory(client, memory_id)

    return _run(config, operation, envr)


@app.command()
def add(words: list[str] = typer.Argument(..., help="The instruction, in your words."),
        scope: Optional[str] = typer.Option(None, "--scope", help="Where it applies, e.g. project:NAME "
                                            "(default: MEMORY.SCOPE, else personal)."),
        project: bool = typer.Option(False, "--project", help="Only in the project you are in (its scope)."),
        share_it: bool = typer.Option(False, "--share", help="In the project's scope, and shared with its team "
                                      "through the repository's team file (see `tmg memory share`)."),
        config: Optional[str] = ConfigOpt) -> int:
    """Teach a standing instruction: kept in your words (secrets masked), pinned, injected for every prompt."""
    from tmg.environment import Environment
    from tmg.errors import UsageError

    if scope is not None and (project or share_it):
        raise UsageError("tmg memory add: --scope, or --project/--share, not both")
    envr = Environment()

    async def operation(client, conf):
        from tmg.memory.lock import WriteLock
        from tmg.memory.manage import Outcome, add_memory
        from tmg.memory.scrub import make_scrubber
        from tmg.memory.share import share_memory
        from tmg.redaction import make_redactor

        where = _project(envr).scope if project or share_it else conf.memory.scope if scope is None else scope
        scrub = make_scrubber(make_redactor(conf.secrets()))
        outcome, engram = await add_memory(client, " ".join(words), scope=where, scrub=scrub, lock=WriteLock())
        if not share_it or engram is None:
            return outcome
        shared = await share_memory(client, engram.id, _project(envr), _home(envr), _trusted(envr), scrub)
        return Outcome(outcome.lines + shared.lines, shared.ok)

    return _run(config, operation, envr)


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


def _project(envr):
    from tmg.project import find_project

    return find_project(envr.cwd)


def _home(envr):
    from tmg.paths import tmg_home

    return tmg_home(envr.env)


def _trusted(envr):
    from tmg.config.trust import TrustStore

    return TrustStore.for_env(envr.env).is_trusted


def _store(conf):
    """The PLUR store the configured memory server keeps (None: memory is off)."""
    from tmg.memory.runtime import memory_server_spec, plur_store_path

    spec = memory_server_spec(conf)
    return None if spec is None else plur_store_path(spec.env)


def _record_at(conf, envr):
    from tmg.memory.sync_record import record_path

    return record_path(_home(envr), _store(conf))


async def _load_team(client, conf, envr):
    """Load the team store of the project in the working folder, as a session there does (only
    when it is trusted; an untrusted one's is unlinked): None, or the line saying why not."""
    from tmg.memory.team_store import point, register

    store = point(_project(envr), _home(envr), _trusted(envr))
    return None if store is None else await register(client, store, _store(conf))


def _shared_from(envr):
    """For `list`: the repository file a shared engram comes from (None: not a shared one)."""
    from tmg.memory.team_store import shared_source

    home = _home(envr)
    return lambda engram: shared_source(home, engram.id, engram.scope)


def _run(config_path: Optional[str], operation, envr=None, unless=None, direct: bool = False,
         env: Optional[dict] = None) -> int:
    """Run `operation(client, config)` against the configured memory server; print its outcome.
    `unless(config, envr)`: lines to print instead, without starting a server (None: start it);
    `direct`: spawn the server, never through the broker, with `env` added to its environment."""
    import asyncio

    from tmg.environment import Environment

    return asyncio.run(_with_client(config_path, envr or Environment(), operation, unless, direct, env))


def _spawn(spec, start_timeout):
    from tmg.mcp.connection import McpConnection

    return McpConnection(spec, start_timeout=start_timeout)


async def _with_client(config_path: Optional[str], envr, operation, unless=None, direct: bool = False,
                       env: Optional[dict] = None) -> int:
    from dataclasses import replace

    from tmg.config.loader import load_config
    from tmg.memory.runtime import MemoryRuntime, memory_server_spec

    config, warnings = load_config(config_path, envr.env, envr.cwd)
    for w in warnings:
        envr.stderr.write(f"tmg: warning: {w}\n")
    early = unless(config, envr) if unless is not None else None
    if early is not None:
        envr.stdout.write("".join(f"{line}\n" for line in early))
        return 0
    spec = memory_server_spec(config)
    if spec is None:
        envr.stderr.write("tmg: memory is off (MEMORY.ENABLED false, or no memory server configured)\n")
        return 1
    if env:
        spec = replace(spec, env={**spec.env, **env})
    entry = config.mcp_servers.get(config.memory.server)
    runtime = MemoryRuntime(spec, start_timeout=entry.timeout if entry else 15.0,
                            warn=lambda m: envr.stderr.write(f"tmg: warning: {m}\n"),
                            **({"connect": _spawn} if direct else {}))
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
