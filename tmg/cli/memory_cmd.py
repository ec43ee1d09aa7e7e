"""``tmg memory ...``: looking after long-term memory from the command line."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Long-term memory: the warm memory broker.", no_args_is_help=True)


@app.command()
def status() -> int:
    """The memory broker: pid, uptime, servers, calls served, store size."""
    from tmg.broker.control import probe, status_lines
    from tmg.environment import Environment

    envr = Environment()
    envr.stdout.write("".join(f"{line}\n" for line in status_lines(probe(envr.env))))
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
