"""A person's machines share one memory (docs/memory-sync.md): the real `tmg`, the real
`@plur-ai/mcp` (pinned, the shipped config), the mock API, two HOMEs on this machine ("machine A"
and "machine B", each with its own TMG_HOME, store and git identity) and a bare git repository
as the remote (no network).

- What A was taught reaches a request on B once A and B have synced (B joins the remote A filled:
  PLUR alone cannot, see tmg.memory.sync_git); B's own earlier memory is kept and reaches A.
- No secret said to A is anywhere in the remote (its files, every commit of its history).
- With TYPE shared only a project engram marked public reaches the remote: a personal one and a
  private project one stay here.
- At a session's end the sync runs in the memory broker after the one-shot has exited: a push the
  remote holds back (a gate in its receive-pack) keeps the broker busy while the run is over.
- A remote that is gone: the session's sync fails, the next session says so in one line (and not
  again while it fails the same way), nothing is lost: the commit waits here and a later sync,
  with the remote back, pushes it.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from e2e.machines import Machine
from e2e.mock_llm import Text
from e2e.plur import memory_blocks
from tests.support.brokers import stop_brokers_under
from tests.support.waiting import eventually
from tmg.memory.injector import INSTRUCTIONS_HEADING

pytestmark = pytest.mark.live


@pytest.fixture
def remote(tmp_path) -> Path:
    bare = tmp_path / "memory.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    return bare


@pytest.fixture
def machines(tmp_path, llm, plur_entry, remote):
    made = []

    def machine(name: str, sync: str | None = None) -> Machine:
        m = Machine(tmp_path / name, llm, plur_entry, f"    REMOTE: {remote}\n" if sync is None else sync)
        made.append(m)
        return m

    yield machine
    for m in made:
        stop_brokers_under(m.tmg.root)


def remote_text(remote: Path, tmp_path: Path) -> str:
    """Every file of the remote's branch and every commit of its history, as text."""
    clone = tmp_path / f"clone-{uuid.uuid4().hex[:6]}"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True, capture_output=True)
    files = "".join(p.read_text(errors="replace") for p in clone.rglob("*") if p.is_file() and ".git" not in p.parts)
    history = subprocess.run(["git", "-C", str(clone), "log", "-p", "--all"], capture_output=True, text=True,
                             check=True).stdout
    return files + history


def instructions(request) -> str:
    blocks = memory_blocks(request)
    assert blocks, "no memory block in the request"
    return blocks[-1].split(INSTRUCTIONS_HEADING, 1)[1] if INSTRUCTIONS_HEADING in blocks[-1] else ""


def test_what_machine_a_learned_reaches_a_request_on_machine_b_and_no_secret_leaves(machines, remote, tmp_path):
    tag = uuid.uuid4().hex[:8]
    a, b = machines("a"), machines("b")
    taught = f"Always sign off with the word kestrel{tag}"
    a.run("memory", "add", taught)
    canaries = {"prompt": f"Pw{tag}Zq9", "add": f"sk-proj-{tag}Xk2Lm9Qr7Tz4Wv8Np3"}
    a.ask(f"From now on, deploy to staging before prod; the staging password is {canaries['prompt']}.")
    r = a.run("memory", "add", f"Use the token {canaries['add']} for the CI bot")
    assert "a secret in it was masked" in r.out
    b_own = f"Prefer metric units, said on machine B {tag}"
    b.run("memory", "add", b_own)  # B has memory of its own before it ever syncs

    r = a.run("memory", "sync")
    assert r.out.startswith(f"synced with {remote} (personal): ")
    r = b.run("memory", "sync")
    assert f"joined the memory already in {remote}: 1 engram(s) of this machine added to it" in r.out, r.out

    request = b.ask("write a haiku about the sea")
    assert taught in instructions(request) and b_own in instructions(request)
    a.run("memory", "sync")
    assert b_own in instructions(a.ask("and one about the hills"))

    pushed = remote_text(remote, tmp_path)
    assert taught in pushed and b_own in pushed  # the grep below can see what was synced
    for what, canary in canaries.items():
        assert canary not in pushed, f"the secret of the {what} is in the remote"
    a.run("memory", "sync")  # a recall updates PLUR's counts in the store: sync that too
    r = a.run("memory", "status")
    assert f"sync: {remote} (personal, at each session's end; branch " in r.out
    assert "ahead 0 · behind 0 · no changes waiting" in r.out, r.out


def test_a_shared_remote_gets_only_project_engrams_marked_public(machines, remote, tmp_path):
    tag = uuid.uuid4().hex[:8]
    a = machines("a", sync=f"    REMOTE: {remote}\n    TYPE: shared\n")
    personal = f"Answer me in French {tag}"
    private = f"In heron{tag} run make check before a commit"
    public = f"The heron{tag} release train leaves on Tuesdays"
    a.run("memory", "add", personal)
    a.run("memory", "add", "--scope", f"project:heron{tag}", private)
    with a.plur() as plur:  # tmg marks nothing public: a PLUR tool of the team's would
        out = plur.call("plur_learn", {"statement": public, "scope": f"project:heron{tag}", "visibility": "public"})
        assert not out.is_error, out.text
    r = a.run("memory", "sync")
    assert r.out.startswith(f"synced with {remote} (shared): "), r.out
    pushed = remote_text(remote, tmp_path)
    assert public in pushed
    assert personal not in pushed and private not in pushed


def test_the_session_end_syncs_in_the_broker_after_the_run_has_exited(machines, remote, tmp_path):
    tag = uuid.uuid4().hex[:8]
    a = machines("a")
    a.run("memory", "sync")  # set up once; session ends sync from then on
    first = a.last_sync()
    gate = tmp_path / "gate"
    # The remote holds every push back until the gate opens (receive-pack waits for the file).
    subprocess.run(["git", "-C", str(a.store), "config", "remote.origin.receivepack",
                    f"sh -c 'while [ ! -e {gate} ]; do sleep 0.05; done; exec git-receive-pack \"$@\"' --"], check=True)
    taught = f"From now on, end every answer with the word osprey{tag}."
    a.ask(taught)  # the one-shot has exited: its answer is out, its sync is still held back
    assert a.last_sync() == first
    r = a.run("memory", "status")
    assert "ahead 1" in r.out or "changes not yet synced" in r.out, r.out
    gate.touch()
    assert eventually(lambda: a.last_sync() != first, guard=60), "the broker never finished the sync"
    done = a.last_sync()
    assert done["by"] == "the session end" and not done["is_error"], done
    assert f"osprey{tag}" in remote_text(remote, tmp_path)


def test_a_remote_that_is_gone_is_one_line_said_once_and_loses_nothing(machines, remote, tmp_path):
    tag = uuid.uuid4().hex[:8]
    a = machines("a")
    a.run("memory", "sync")
    away = tmp_path / "away.git"
    shutil.move(remote, away)  # the remote is gone
    taught = f"From now on, call the staging host by the name wren{tag}."
    a.ask(taught)
    assert eventually(lambda: (a.last_sync() or {}).get("by") == "the session end", guard=60)
    assert a.last_sync()["is_error"] or "push_error" in a.last_sync()["text"]

    a.tmg.llm.enqueue(Text("Fine."))
    r = a.run("-r", "anything new?")
    said = [line for line in r.err.splitlines() if "sync" in line]
    assert len(said) == 1, r.err
    assert said[0].startswith(f"tmg: memory: the last sync (") and "failed (the push failed: " in said[0]
    assert said[0].endswith("your memory is committed here and the next sync pushes it; a later session's end "
                            "retries it (`tmg memory sync` now)")
    a.tmg.llm.enqueue(Text("Fine."))
    r = a.run("-r", "and now?")
    assert "sync" not in r.err, r.err  # the same failure is not said again

    r = a.run("memory", "sync", code=1)  # by hand, still gone: one line, exit 1
    assert r.out == "" and len(r.err.splitlines()) == 1, r.err
    assert r.err.startswith(f"tmg: memory: sync with {remote} failed (the remote cannot be reached: fatal: ")

    shutil.move(away, remote)  # back: the commits kept here go now
    r = a.run("memory", "sync")
    assert f"wren{tag}" in remote_text(remote, tmp_path)


