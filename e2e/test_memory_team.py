"""A team's repository memory (docs/memory-sync.md): the real `tmg` and the real `@plur-ai/mcp`, two
users ("alice" and "bob", each with a HOME and TMG_HOME of their own), and a bare git repository
as the project's upstream (no network).

Alice shares an instruction with `tmg memory add --share` in her trusted checkout, commits the
team file and pushes. Bob clones the repository twice: in the clone he trusts the instruction
reaches his request under the repository's heading (and `tmg memory list` says where it comes
from); in the clone he does not trust it never does, before or after the trusted one was used.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from e2e.machines import Machine
from e2e.plur import memory_blocks
from tests.support.brokers import stop_brokers_under
from tmg.memory.injector import SHARED_HEADING
from tmg.memory.team_store import TEAM_FILE

pytestmark = pytest.mark.live


def git(*args: str) -> str:
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def users(tmp_path, llm, plur_entry):
    made = []

    def user(name: str) -> Machine:
        m = Machine(tmp_path / name, llm, plur_entry)
        made.append(m)
        return m

    yield user
    for m in made:
        stop_brokers_under(m.tmg.root)


def test_a_shared_instruction_reaches_a_teammate_in_a_trusted_clone_and_never_in_an_untrusted_one(users, tmp_path):
    tag = uuid.uuid4().hex[:8]
    upstream = tmp_path / "heron.git"
    git("init", "-q", "--bare", str(upstream))
    alice, bob = users("alice"), users("bob")
    mine = alice.home / "heron"
    git("clone", "-q", str(upstream), str(mine))
    alice.run("trust", str(mine))
    rule = f"In heron{tag}, run make lint{tag} before every commit"
    r = alice.run("memory", "add", "--share", rule, cwd=mine)
    assert "shared " in r.out and str(mine / TEAM_FILE) in r.out, r.out
    assert rule in (mine / TEAM_FILE).read_text()
    git("-C", str(mine), "add", str(TEAM_FILE))
    git("-C", str(mine), "commit", "-q", "-m", "team memory")
    git("-C", str(mine), "push", "-q", "origin", "HEAD")

    trusted, untrusted = bob.home / "trusted", bob.home / "untrusted"
    git("clone", "-q", str(upstream), str(trusted))
    git("clone", "-q", str(upstream), str(untrusted))
    bob.run("trust", str(trusted))

    def seen(cwd: Path) -> str:
        return "\n".join(memory_blocks(bob.ask("what should I do before committing?", cwd=cwd)))

    assert f"lint{tag}" not in seen(untrusted)
    block = seen(trusted)
    assert SHARED_HEADING in block and rule in block.split(SHARED_HEADING, 1)[1], block
    assert f"lint{tag}" not in seen(untrusted)  # the trusted clone's store is not left loaded

    r = bob.run("memory", "list", cwd=trusted)
    line = next((l for l in r.out.splitlines() if f"lint{tag}" in l), "")
    assert f"shared, from {trusted / TEAM_FILE}" in line, r.out
