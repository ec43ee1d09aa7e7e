"""A rewind's memory writes retracted through the real tool surface (fakeplur in-process, with the
real schemas): instructions retired, what cannot be retracted said."""

from __future__ import annotations

import time

from tests.support.doubles import FakePlurCaller
from tmg.memory.client import PlurClient
from tmg.memory.retract import retract


async def test_a_pinned_instruction_is_retired_and_an_earlier_or_kept_one_stays():
    client = PlurClient(FakePlurCaller("lean"))
    taught = (await client.learn("Never indent YAML with tabs", ["origin:user"], pinned=True)).value
    shared = (await client.learn("Always sign commits", ["origin:user"], pinned=True)).value
    now = time.time()
    writes = [{"kind": "learn", "id": taught, "text": "Never indent YAML with tabs", "p": now},
              {"kind": "learn", "id": shared, "text": "Always sign commits", "p": now},
              {"kind": "learn", "id": "ENG-2001-01-01-001", "text": "an old one", "p": now}]
    lines = await retract(client, writes, kept_ids={shared})
    assert lines[0] == (f'memory: retracted the instruction {taught} "Never indent YAML with tabs" '
                        "(no longer pinned or recalled)")
    assert lines[1].startswith(f'memory: kept {shared} "Always sign commits": a prompt that stays taught it too')
    assert lines[2].startswith("memory: kept ENG-2001-01-01-001") and "in memory before the rewound prompt" in lines[2]
    pinned = {e.id for e in (await client.pinned()).value}
    assert taught not in pinned and shared in pinned


async def test_an_episode_a_server_cannot_remove_is_said_to_stay_and_no_server_is_said():
    client = PlurClient(FakePlurCaller("full"))
    episode = (await client.capture("the answer", "default", "s1")).value.id
    (line,) = await retract(client, [{"kind": "capture", "id": episode, "text": "the answer", "p": time.time()}])
    assert line.startswith(f'memory: the episode {episode} "the answer" stays in the timeline (')
    (offline,) = await retract(None, [{"kind": "learn", "id": "ENG-1", "text": "x", "p": 0}])
    assert "not retracted (ENG-1): no memory server could be reached" in offline
