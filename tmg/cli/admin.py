"""``tmg sessions``, ``tmg config``, ``tmg doctor``, ``tmg trust``, ``tmg permissions``, ``tmg skills``:
looking after tmg rather than chatting."""

from __future__ import annotations

from typing import List, Optional

import typer

from tmg.cli.given import options_for
from tmg.cli.memory_cmd import app as memory_app

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})

app.add_typer(memory_app, name="memory")

ConfigOpt = typer.Option(None, "-c", "--config", help="Config file.")


@app.command(context_settings={"allow_extra_args": True})
def sessions(ctx: typer.Context,
             mode: Optional[str] = typer.Option(None, "--mode", help="Only this mode."),
             search: Optional[List[str]] = typer.Option(None, "--search", metavar="WORDS",
                                                        help="Find the messages that hold WORDS (no model).")) -> int:
    """List sessions: id, mode, messages, folder (the project), first prompt; * marks each project's
    current one. --search WORDS finds messages across the histories, this project's first."""
    from tmg.cli.sessions_cmd import run_sessions
    from tmg.environment import Environment

    # `--search a b`: the option takes one word, the rest arrive as extra words (ctx.args).
    words = [*(search or ()), *ctx.args] if search is not None else None
    if words is None and ctx.args:
        raise typer.BadParameter(f"unexpected words {' '.join(ctx.args)!r}; to search, use --search WORDS")
    return run_sessions(options_for(mode=mode), Environment(), words)


@app.command()
def compact(
    focus: Optional[str] = typer.Argument(None, help="What the summary should keep in particular.", show_default=False),
    mode: Optional[str] = typer.Option(None, "--mode", help="The mode whose current session to compact."),
    config: Optional[str] = ConfigOpt,
) -> int:
    """Summarise the older turns of the mode's current session now, as /compact does in the chat.
    The originals stay in the history and the transcript; what is sent starts from the summary."""
    from tmg.cli.compact import run_compact
    from tmg.session.options import ChatOptions
    from tmg.environment import Environment

    given = options_for(config_path=config, mode=mode)
    return run_compact(ChatOptions(config_path=given.config_path, mode=given.mode, model=given.model), Environment(),
                       focus or "")


@app.command()
def rewind(
    count: int = typer.Argument(1, metavar="N", help="How many of the latest prompts to take back (default 1)."),
    force: bool = typer.Option(False, "--force", help="Restore files even where they changed since (your changes go)."),
    listing: bool = typer.Option(False, "--list", help="List the prompts that can be rewound, newest first."),
    mode: Optional[str] = typer.Option(None, "--mode", help="The mode whose current session (of this project) to rewind."),
    config: Optional[str] = ConfigOpt,
) -> int:
    """Take back the last N prompts: their file changes are undone, the model no longer sees their
    exchanges (tmg -t still shows them, marked) and what memory learned from them is retracted.
    A file you changed since is shown, not overwritten (use --force); shell commands cannot be undone."""
    from tmg.cli.rewind_cmd import run_rewind
    from tmg.environment import Environment
    from tmg.session.options import ChatOptions

    given = options_for(config_path=config, mode=mode)
    return run_rewind(ChatOptions(config_path=given.config_path, mode=given.mode), Environment(), count, force, listing)


@app.command("config")
def show_config(config: Optional[str] = ConfigOpt) -> int:
    """Print the resolved config (secrets masked) and where it came from."""
    from tmg.config.inspect import render_config
    from tmg.config.live import LiveConfig
    from tmg.config.loader import load_config
    from tmg.environment import Environment

    envr = Environment()
    given = options_for(config_path=config)
    cfg, warnings = load_config(given.config_path, envr.env, envr.cwd)
    for w in warnings:
        envr.stderr.write(f"tmg: warning: {w}\n")
    # What a chat with these options would run with: --mode and --system applied, -m's provider named.
    cfg = LiveConfig(cfg, mode=given.mode, person=given.system).get()
    envr.stdout.write(render_config(cfg))
    from tmg.context.instruction_files import listing

    envr.stdout.write("".join(f"# {line}\n" for line in listing(envr.env, envr.cwd)))
    if given.model:
        from tmg.config.providers import choose_provider

        chosen = choose_provider(cfg, given.model)
        envr.stdout.write(f"# -m {given.model}: provider {chosen.name}, model {chosen.model}\n")
    return 0


@app.command()
def mcp(
    action: Optional[str] = typer.Argument(None, help="login NAME: log in to a server that wants OAuth; "
                                           "logout NAME: forget that login.", show_default=False),
    name: Optional[str] = typer.Argument(None, help="The server (a key of MCP_SERVERS).", show_default=False),
    config: Optional[str] = ConfigOpt,
) -> int:
    """The MCP servers: status (ready, starting, failed and why), transport, tools, whether warm.
    `tmg mcp login NAME` logs in to a URL server that wants OAuth (it prints the URL to open);
    `tmg mcp logout NAME` forgets the login."""
    from tmg.cli.mcp_cmd import list_servers, login, logout
    from tmg.environment import Environment
    from tmg.errors import UsageError

    config = options_for(config_path=config).config_path
    if action is None:
        return list_servers(config, Environment())
    if action not in ("login", "logout") or not name:
        raise UsageError("usage: tmg mcp [login NAME | logout NAME]")
    return (login if action == "login" else logout)(name, config, Environment())


@app.command()
def doctor(config: Optional[str] = ConfigOpt) -> int:
    """Check the config, every provider (key, endpoint, model), memory and each MCP server."""
    from tmg.cli.doctor import run_doctor
    from tmg.environment import Environment

    given = options_for(config_path=config)
    return run_doctor(given.config_path, Environment(), model=given.model)


@app.command()
def trust(
    path: Optional[str] = typer.Argument(None, help="The folder (default: the current one).", show_default=False),
    list_: bool = typer.Option(False, "--list", help="List the trusted folders."),
    revoke: bool = typer.Option(False, "--revoke", help="Stop trusting the folder."),
) -> int:
    """Trust a folder: its ./tmg.yaml may then run its MCP servers and use its providers'
    URL, HEADERS and API_KEY. Until then tmg ignores those settings there (the REPL asks once)."""
    from pathlib import Path

    from tmg.config.discovery import PROJECT_FILE
    from tmg.config.trust import TrustStore
    from tmg.environment import Environment
    from tmg.errors import TmgError, UsageError

    envr = Environment()
    store = TrustStore.for_env(envr.env)
    if list_:
        if path is not None or revoke:
            raise UsageError("tmg trust --list takes no folder and no --revoke")
        listing = store.listing()
        if not listing:
            envr.stdout.write("no trusted folders (tmg trust [PATH] adds one)\n")
        for folder, same in listing:
            note = "" if same else "  (gone or replaced since it was trusted: not trusted; tmg trust it again)"
            envr.stdout.write(f"{folder}{note}\n")
        return 0
    folder = Path(path).expanduser() if path else envr.cwd
    if folder.name == PROJECT_FILE and folder.is_file():
        folder = folder.parent  # `tmg trust repo/tmg.yaml` means its folder
    if revoke:
        forgotten = store.revoke(folder)
        if forgotten is None:
            raise TmgError(f"{folder} was not trusted; nothing to revoke (tmg trust --list shows the trusted folders)")
        envr.stdout.write(f"no longer trusted: {forgotten}\n")
        return 0
    real = store.trust(folder)
    shown = real if str(folder) == real else f"{real} (the folder {folder} points to)"
    has_file = (Path(real) / PROJECT_FILE).is_file()
    envr.stdout.write(f"trusted {shown}: its tmg.yaml may now run its MCP servers and use its providers' "
                      f"URL, HEADERS and API_KEY{'' if has_file else ' (it has no tmg.yaml yet)'}\n")
    return 0


@app.command()
def permissions(
    revoke: Optional[str] = typer.Option(None, "--revoke", metavar="N|RULE",
                                         help="Forget saved decision N (as listed) or every one for RULE."),
) -> int:
    """List the decisions saved by answering "always" at a tool prompt (or revoke one), then the
    mode and the config's rules that hold here, as /permissions shows them."""
    from tmg.environment import Environment
    from tmg.permissions.store import DecisionStore

    envr = Environment()
    store = DecisionStore.for_env(envr.env)
    if revoke is not None:
        envr.stdout.write(store.revoke_line(revoke) + "\n")
        return 0
    envr.stdout.write("\n".join(store.listing()) + "\n")
    envr.stdout.write("".join(f"{line}\n" for line in _rule_lines(options_for(), envr)))
    return 0


def _rule_lines(options, envr) -> list[str]:
    """The mode (--permissions, else PERMISSIONS.MODE) and the rules of the config in use (-c)."""
    from tmg.config.loader import load_config
    from tmg.config.model import PERMISSION_MODES
    from tmg.errors import UsageError
    from tmg.permissions.engine import PermissionEngine

    if options.permissions is not None and options.permissions not in PERMISSION_MODES:
        raise UsageError(f"--permissions {options.permissions!r} is not a mode; use one of: {', '.join(PERMISSION_MODES)}")
    config, _warnings = load_config(options.config_path, envr.env, envr.cwd)
    engine = PermissionEngine(lambda: config, cwd=str(envr.cwd), env=envr.env, mode=options.permissions)
    return engine.describe()


@app.command()
def skills(mode: Optional[str] = typer.Option(None, "--mode", help="Show which skills this mode's session has active.")) -> int:
    """List the skills (SKILL.md folders): where each came from, which are active, what was not loaded."""
    from tmg.environment import Environment
    from tmg.paths import tmg_home
    from tmg.project import project_root
    from tmg.session.store import SessionStore
    from tmg.skills.discovery import SkillScanner
    from tmg.skills.listing import listing_lines
    from tmg.skills.session import SKILLS_FILE, active_names, trusted_folder

    envr = Environment()
    catalog = SkillScanner(envr.env, envr.cwd, trusted_folder(envr.env)).scan()
    mode = options_for(mode=mode).mode or "default"
    ref = SessionStore(tmg_home(envr.env)).current(mode, project_root(envr.cwd))  # this project's session
    active = active_names(ref.dir / SKILLS_FILE) if ref is not None else []
    for line in listing_lines(catalog, active):
        envr.stdout.write(line + "\n")
    return 0
