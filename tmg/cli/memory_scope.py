"""`tmg memory scope ID personal|project`: its own command module (`tmg.memory.rescope`), registered
on `tmg memory` by tmg/cli/memory_cmd.py."""

from __future__ import annotations

from typing import Optional

import typer


def scope(engram_id: str = typer.Argument(..., metavar="ID", help="An engram id (see list or search)."),
          where: str = typer.Argument(..., metavar="personal|project",
                                      help="personal: recalled in every project; project: only in this one."),
          config: Optional[str] = typer.Option(None, "-c", "--config", help="Config file.")) -> int:
    """Move a memory to your personal scope, or to the scope of the project you are in."""
    from tmg.cli.memory_cmd import _run
    from tmg.environment import Environment
    from tmg.project import find_project
    from tmg.memory.rescope import move_memory

    project = find_project(Environment().cwd)
    return _run(config, lambda client, _scope: move_memory(client, engram_id, where.lower(), project))
