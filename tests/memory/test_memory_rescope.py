"""`tmg memory scope ID personal|project`: one memory moved through plur_rescope, both profiles,
its failures said with the server's own reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.doubles import FakePlurCaller
from tmg.memory.client import PlurClient
from tmg.memory.payloads import rescope_payload
from tmg.project import Project
from tmg.memory.rescope import move_memory

PROJECT = Project("github.com/acme/shop", Path("/nonexistent"))


@pytest.mark.parametrize("profile", ["lean", "full"])
async def test_a_memory_moves_to_the_project_and_back(profile) -> None:
    caller = FakePlurCaller(profile)
    client = PlurClient(caller)
    engram = (await client.learn("Run the linter before every commit.", ["origin:user"], pinned=True)).value
    moved = await move_memory(client, engram, "project", PROJECT)
    again = await move_memory(client, engram, "project", PROJECT)
    listed = (await client.pinned()).value
    back = await move_memory(client, engram, "personal", PROJECT)
    assert moved.ok and moved.lines == (f"moved {engram}: personal (every project) -> project (project:github.com/acme/shop)",)
    assert again.lines == (f"{engram} is already project (project:github.com/acme/shop)",)
    assert [(e.id, e.scope) for e in listed] == [(engram, "project:github.com/acme/shop")]  # still pinned
    assert back.lines == (f"moved {engram}: project (project:github.com/acme/shop) -> personal (every project)",)
    assert [(e.id, e.scope) for e in (await client.pinned()).value] == [(engram, "global")]


async def test_an_unknown_id_or_place_is_said_and_fails() -> None:
    client = PlurClient(FakePlurCaller("full"))
    missing = await move_memory(client, "ENG-2099-01-01-999", "personal", PROJECT)
    nowhere = await move_memory(client, "ENG-2099-01-01-999", "team", PROJECT)
    assert not missing.ok and missing.lines == ("memory: could not move ENG-2099-01-01-999 "
                                                "(Engram not found: ENG-2099-01-01-999)",)
    assert not nowhere.ok and nowhere.lines == ("memory: say where to move ENG-2099-01-01-999: personal or project",)


def test_the_rescope_payload_is_exactly_id_and_target() -> None:
    assert rescope_payload("ENG-1", "global") == {"id": "ENG-1", "target_scope": "global"}
    with pytest.raises(ValueError):
        rescope_payload(" ", "global")
