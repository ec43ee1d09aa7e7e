"""Which words name a subcommand: any command or sub-app registered on the subcommand app."""

from __future__ import annotations

import typer

from tmg.cli.chat import chat
from tmg.cli.route import subcommand_args, subcommand_names, value_options

TAKES_VALUE = value_options(chat)


def test_the_chat_options_taking_a_value_come_from_its_signature() -> None:
    assert TAKES_VALUE == {"-c", "--config", "--mode", "-m", "--model"}


def test_every_registered_command_and_sub_app_is_a_subcommand() -> None:
    app = typer.Typer()

    @app.command()
    def first_thing() -> None: ...

    @app.command("renamed")
    def _whatever() -> None: ...

    app.add_typer(typer.Typer(), name="memory")
    assert subcommand_names(app) == {"first-thing", "renamed", "memory"}


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
