"""Which words name a subcommand: any command or sub-app registered on the subcommand app."""

from __future__ import annotations

from tmg.cli import admin
from tmg.cli.chat_line import VALUE_OPTIONS
from tmg.cli.route import SUBCOMMANDS, subcommand_args

TAKES_VALUE = set(VALUE_OPTIONS)


def registered_names(app) -> set[str]:
    """What typer itself would run as a command or sub-app of ``app``."""
    from typer.main import get_command_name

    names = {c.name or get_command_name(c.callback.__name__) for c in app.registered_commands if c.callback or c.name}
    for group in app.registered_groups:
        name = group.name or getattr(group.typer_instance.info, "name", None)
        if isinstance(name, str):  # unnamed: typer gives it no word of its own
            names.add(name)
    return names


def test_the_routing_table_names_every_registered_subcommand() -> None:
    registered = registered_names(admin.app)
    missing, stale = registered - SUBCOMMANDS, SUBCOMMANDS - registered
    assert not missing, f"add {sorted(missing)} to SUBCOMMANDS in tmg/cli/route.py: `tmg WORD` would go to the model"
    assert not stale, f"{sorted(stale)} in SUBCOMMANDS is no subcommand: `tmg WORD` would be refused"


def test_global_options_move_behind_the_subcommand_words() -> None:
    names = {"doctor", "sessions", "memory"}
    assert subcommand_args(["-c", "f.yaml", "doctor"], names, TAKES_VALUE) == ["doctor", "-c", "f.yaml"]
    assert subcommand_args(["--mode", "doctor", "sessions"], names, TAKES_VALUE) == ["sessions", "--mode", "doctor"]
    assert subcommand_args(["--debug", "-c", "f", "memory", "list", "--debug"], names, TAKES_VALUE) == [
        "memory", "list", "-c", "f"]
    assert subcommand_args(["--config=f", "doctor", "--", "x"], names, TAKES_VALUE) == ["doctor", "--config=f", "--", "x"]


def test_a_prompt_is_not_a_subcommand() -> None:
    names = {"doctor"}
    assert subcommand_args(["--", "doctor"], names, TAKES_VALUE) is None
    assert subcommand_args(["-m", "doctor"], names, TAKES_VALUE) is None  # the model's name
    assert subcommand_args(["why", "doctor"], names, TAKES_VALUE) is None
    assert subcommand_args([], names, TAKES_VALUE) is None
