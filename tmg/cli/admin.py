"""``tmg sessions``, ``tmg config``, ``tmg doctor``, ``tmg trust``, ``tmg permissions``, ``tmg skills``:
looking after tmg rather than chatting."""

from __future__ import annotations

import json
from typing import Optional

import typer

from tmg.cli.memory_cmd import app as memory_app

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})

app.add_typer(memory_app, name="memory")

ConfigOpt = typer.Option(None, "-c", "--config", help="Config file.")


@app.command()
def sessions(mode: Optional[str] = typer.Option(None, "--mode", help="Only this mode.")) -> int:
    """List sessions: id, mode, messages, first prompt; * marks each mode's current one."""
    from tmg.environment import Environment
    from tmg.paths import tmg_home
    from tmg.session.store import SessionStore

    envr = Environment()
    store = SessionStore(tmg_home(envr.env))
    refs = [r for r in store.list() if mode is None or r.mode == mode]
    if not refs:
        envr.stdout.write("no sessions yet\n")
        return 0
    current = {r.mode: (store.current(r.mode) or r).id for r in refs}
    for ref in refs:
        count, first = _summary(ref.history_path)
        mark = "*" if current.get(ref.mode) == ref.id else " "
        envr.stdout.write(f"{mark} {ref.id}  {ref.mode:<12} {count:>5} msgs  {first}\n")
    return 0


def _summary(path) -> tuple[int, str]:
    count, first = 0, ""
    try:
        with path.open("rb") as f:
            for line in f:
                count += 1
                if not first and b'"role":"user"' in line:
                    try:
                        first = str(json.loads(line).get("content", ""))[:60].replace("\n", " ")
                    except ValueError:
                        pass
    except OSError:
        pass
    return count, first


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

    return run_compact(ChatOptions(config_path=config, mode=mode), Environment(), focus or "")


@app.command()
def rewind(
    count: int = typer.Argument(1, metavar="N", help="How many of the latest prompts to take back (default 1)."),
    force: bool = typer.Option(False, "--force", help="Restore files even where they changed since (your changes go)."),
    listing: bool = typer.Option(False, "--list", help="List the prompts that can be rewound, newest first."),
    mode: Optional[str] = typer.Option(None, "--mode", help="The mode whose current session to rewind."),
    config: Optional[str] = ConfigOpt,
) -> int:
    """Take back the last N prompts: their file changes are undone, the model no longer sees their
    exchanges (tmg -t still shows them, marked) and what memory learned from them is retracted.
    A file you changed since is shown, not overwritten (use --force); shell commands cannot be undone."""
    from tmg.cli.rewind_cmd import run_rewind
    from tmg.environment import Environment
    from tmg.session.options import ChatOptions

    return run_rewind(ChatOptions(config_path=config, mode=mode), Environment(), count, force, listing)


@app.command("config")
def show_config(config: Optional[str] = ConfigOpt) -> int:
    """Print the resolved config (secrets masked) and where it came from."""
    from tmg.config.inspect import render_config
    from tmg.config.loader import load_config
    from tmg.environment import Environment

    envr = Environment()
    cfg, warnings = load_config(config, envr.env, envr.cwd)
    for w in warnings:
        envr.stderr.write(f"tmg: warning: {w}\n")
    envr.stdout.write(render_config(cfg))
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

    if action is None:
        return list_servers(config, Environment())
    if action not in ("login", "logout") or not name:
        raise UsageError("usage: tmg mcp [login NAME | logout NAME]")
    return (login if action == "login" else logout)(name, config, Environment())


@app.command()
def doctor(config: Optional[str] = ConfigOpt) -> int:
    """Check the config, the selected provider's key, and each MCP server."""
    from tmg.cli.doctor import run_doctor
    from tmg.environment import Environment

    return run_doctor(config, Environment())


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
    """List the decisions saved by answering "always" at a tool prompt, or revoke one."""
    from tmg.environment import Environment
    from tmg.permissions.store import DecisionStore

    envr = Environment()
    store = DecisionStore.for_env(envr.env)
    if revoke is not None:
        envr.stdout.write(store.revoke_line(revoke) + "\n")
        return 0
    envr.stdout.write("\n".join(store.listing()) + "\n")
    return 0


@app.command()
def skills(mode: str = typer.Option("default", "--mode", help="Show which skills this mode's session has active.")) -> int:
    """List the skills (SKILL.md folders): where each came from, which are active, what was not loaded."""
    from tmg.environment import Environment
    from tmg.paths import tmg_home
    from tmg.session.store import SessionStore
    from tmg.skills.discovery import SkillScanner
    from tmg.skills.listing import listing_lines
    from tmg.skills.session import SKILLS_FILE, active_names, trusted_folder

    envr = Environment()
    catalog = SkillScanner(envr.env, envr.cwd, trusted_folder(envr.env)).scan()
    ref = SessionStore(tmg_home(envr.env)).current(mode)
    active = active_names(ref.dir / SKILLS_FILE) if ref is not None else []
    for line in listing_lines(catalog, active):
        envr.stdout.write(line + "\n")
    return 0
