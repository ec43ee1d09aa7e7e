"""The warm memory broker end to end (memory.md §9): the real `tmg` command, the real PLUR (pinned)
or fakeplur, and the broker those runs start for themselves.

What is observed: the requests the mock receives (recall in them or not), what the store holds
(read back through a second client), `tmg memory status|stop`, the socket's modes, the
processes. Each test's runs get their own TMG_HOME, so their own broker; the `tmg` fixture stops
it when the test ends.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from e2e.conftest import tmg_command
from e2e.mock_llm import Text
from e2e.plur import FakePlur, memory_blocks
from tests.support.brokers import brokers_under, stop_brokers_under, wait_gone
from tests.support.waiting import eventually
from tests.support.plur_server import running
from tmg.mcp import ServerSpec, child_environment

REPO = Path(__file__).resolve().parent.parent


class Plur:
    """The real PLUR (profile full, keyword search) with a store under `home`, as tmg's config names it."""

    def __init__(self, root: Path, entry: Path) -> None:
        self.root, self.entry = root, entry
        self.neutral = root / "neutral"
        self.neutral.mkdir(parents=True, exist_ok=True)

    def config(self, home: Path, learn: str = "batch") -> str:
        home.mkdir(parents=True, exist_ok=True)
        return ("MCP_SERVERS:\n  plur:\n    COMMAND: node\n"
                f"    ARGS: [{json.dumps(str(self.entry))}]\n"
                f"    ENV: {{HOME: {json.dumps(str(home))}, PLUR_TOOL_PROFILE: full, PLUR_DISABLE_EMBEDDINGS: '1'}}\n"
                f"    DIR: {json.dumps(str(self.neutral))}\n    TIMEOUT: 60\n"
                f"MEMORY:\n  LEARN: {learn}\n")

    def reader(self, home: Path):
        env = child_environment({"HOME": str(home), "PLUR_TOOL_PROFILE": "full", "PLUR_DISABLE_EMBEDDINGS": "1"})
        return running(ServerSpec(name="reader", command="node", args=(str(self.entry),), env=env,
                                  cwd=str(self.neutral)))


def recalled(reader, query: str) -> list[str]:
    outcome = reader.call("plur_recall", {"query": query})
    assert not outcome.is_error, outcome.text
    return [r["statement"] for r in outcome.data["results"]]


def status(tmg) -> str:
    r = tmg.run("memory", "status", env=tmg.env(memory=True))
    assert r.code == 0, r.err
    return r.out


def broker_pid(tmg) -> int:
    (pid,) = brokers_under(tmg.root)
    return pid


def spawn(tmg, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(tmg_command() + ["-r", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmg.work, env=env)


def test_the_first_run_starts_a_broker_that_the_next_runs_find_warm(tmg, llm, tmp_path):
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config())
    llm.enqueue(Text("One."), Text("Two."))
    env = tmg.env(memory=True)
    first = tmg.run("-r", "--debug", "one?", env=env)
    second = tmg.run("-r", "--debug", "two?", env=env)
    assert (first.code, first.out, second.code, second.out) == (0, "One.\n", 0, "Two.\n"), first.err + second.err
    assert "via cold start (broker started)" in first.err
    assert "via warm broker" in second.err
    out = status(tmg)
    assert f"broker: running (pid {broker_pid(tmg)}," in out
    assert "1 server(s)" in out and "started 1 time(s)" in out  # one fakeplur for both runs
    # both sessions' batches landed through it
    assert {"One.", "Two."} <= set(plur.statements())


def test_memory_stop_ends_the_broker_and_its_server_and_the_next_run_starts_another(tmg, llm, tmp_path):
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config())
    llm.enqueue(Text("One."), Text("Two."))
    assert tmg.run("-r", "one?", env=tmg.env(memory=True)).code == 0
    first = broker_pid(tmg)
    server = int(status(tmg).split("server plur: up, pid ")[1].split(",")[0])
    r = tmg.run("memory", "stop", env=tmg.env(memory=True))
    assert (r.code, r.out) == (0, f"broker stopped (pid {first})\n")
    assert wait_gone(first) and wait_gone(server)
    assert status(tmg).startswith("broker: not running (the next tmg that needs memory starts one)")
    r = tmg.run("-r", "--debug", "two?", env=tmg.env(memory=True))
    assert r.code == 0 and "via cold start (broker started)" in r.err
    assert broker_pid(tmg) != first


@pytest.fixture
def open_home():
    """A TMG_HOME another user could reach (pytest's tmp folders are private to root)."""
    root = Path(tempfile.mkdtemp(prefix="tmg-peer-"))
    root.chmod(0o711)
    try:
        yield root / "home"
    finally:
        stop_brokers_under(root)
        shutil.rmtree(root, ignore_errors=True)


def test_the_socket_is_private_and_another_user_is_refused(tmg, llm, tmp_path, open_home):
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config())
    llm.enqueue(Text("One."))
    env = tmg.env(memory=True, TMG_HOME=str(open_home))
    assert tmg.run("-r", "one?", env=env).code == 0
    open_home.chmod(0o711)
    folder = open_home / "run"
    sock = folder / "broker.sock"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
    if os.getuid() != 0:
        return  # only root can switch to another uid; the modes above are what keep others out
    assert _as_nobody(sock) == "EACCES"  # the folder and socket modes stop another user at the door
    # Past the modes (opened up by hand), the broker itself refuses a peer of another uid.
    folder.chmod(0o755)
    sock.chmod(0o666)
    assert _as_nobody(sock) == "refused"
    # and tmg itself does not talk to a broker whose folder others can reach
    r = tmg.run("memory", "status", env=env)
    assert r.out.startswith(f"broker: not running ({folder} is not private to this user; tmg does not use it")
    folder.chmod(0o700)
    assert tmg.run("memory", "status", env=env).out.startswith("broker: running")  # it still serves its user


def _as_nobody(sock: Path) -> str:
    """Connect from a child that switched to uid nobody: EACCES, refused (closed unanswered), or served."""
    script = (
        "import os, socket, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n    s.connect(sys.argv[1])\n"
        "except PermissionError:\n    print('EACCES'); sys.exit()\n"
        "try:\n"
        "    s.sendall(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tmg/status\"}\\n')\n"
        "    s.settimeout(10)\n"
        "    print('served' if s.recv(65536) else 'refused')\n"
        "except (BrokenPipeError, ConnectionResetError):\n"
        "    print('refused')\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(sock)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_broker_of_other_code_steps_down_for_a_new_one(tmg, llm, tmp_path):
    """A tmg upgraded while a broker runs: the old broker exits and the new code's broker serves."""
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config())
    llm.enqueue(Text("One."), Text("Two."))
    assert tmg.run("-r", "one?", env=tmg.env(memory=True)).code == 0
    old = broker_pid(tmg)
    upgraded = tmp_path / "upgraded"
    shutil.copytree(REPO / "tmg", upgraded / "tmg", ignore=shutil.ignore_patterns("__pycache__"))
    daemon = upgraded / "tmg" / "broker" / "daemon.py"
    daemon.write_text(daemon.read_text() + "\n# a new release\n")
    env = tmg.env(memory=True, PYTHONPATH=str(upgraded))
    r = subprocess.run([sys.executable, "-m", "tmg", "-r", "--debug", "two?"], capture_output=True, text=True,
                       cwd=tmg.work, env=env, timeout=60)
    assert r.returncode == 0 and r.stdout == "Two.\n", r.stderr
    assert "via cold start (broker started)" in r.stderr
    assert wait_gone(old)
    assert broker_pid(tmg) != old
    assert "Two." in plur.statements()


def test_a_changed_server_spec_gets_a_new_server_not_the_running_one(tmg, llm, tmp_path, plur_entry):
    plur = Plur(tmp_path, plur_entry)
    marker = uuid.uuid4().hex[:8]
    first, second = f"The wren{marker} feeder is by the door.", f"The lark{marker} feeder is by the gate."
    llm.enqueue(Text(first), Text(second))
    tmg.write_config(plur.config(tmp_path / "store-a"))
    assert tmg.run("-r", "where is the feeder?", env=tmg.env(memory=True), timeout=90).code == 0
    tmg.write_config(plur.config(tmp_path / "store-b"))  # only the server's ENV (its HOME) differs
    assert tmg.run("-r", "and the other?", env=tmg.env(memory=True), timeout=90).code == 0
    out = status(tmg)
    assert "2 server(s)" in out and out.count("started 1 time(s)") == 2
    with plur.reader(tmp_path / "store-b") as reader:  # each answer in its own run's store
        assert recalled(reader, "feeder") == [second]
    with plur.reader(tmp_path / "store-a") as reader:
        assert recalled(reader, "feeder") == [first]


def test_two_runs_at_once_share_one_broker_and_one_plur_and_both_writes_land(tmg, llm, tmp_path, plur_entry):
    plur = Plur(tmp_path, plur_entry)
    home = tmp_path / "store"
    tmg.write_config(plur.config(home))
    marker = uuid.uuid4().hex[:8]
    slow, quick = f"The heron{marker} pond freezes in January.", f"The otter{marker} dam is on the east bank."
    llm.enqueue(Text(slow, delay=3), Text(quick))
    env = tmg.env(memory=True)
    long_run = spawn(tmg, "--debug", "when does the pond freeze?", env=env)
    try:
        llm.wait_requests(1, timeout=60)  # the first run has recalled and waits for its answer
        r = tmg.run("-r", "--new", "--debug", "where is the dam?", env=env, timeout=90)
        out, err = long_run.communicate(timeout=90)
    finally:
        long_run.kill()
    assert (r.code, r.out) == (0, quick + "\n"), r.err
    assert (long_run.returncode, out) == (0, slow + "\n"), err
    assert "via warm broker" in r.err  # the second found the first's broker
    assert "memory" not in err.replace("memory server 'plur' ready", "")  # no warning, no write failure
    text = status(tmg)
    assert "1 server(s)" in text and "started 1 time(s)" in text
    with plur.reader(home) as reader:
        assert recalled(reader, f"heron{marker} pond") == [slow]
        assert recalled(reader, f"otter{marker} dam") == [quick]


def test_a_broker_killed_mid_session_fails_open_and_the_next_run_starts_a_new_one(tmg, llm, tmp_path, plur_entry):
    plur = Plur(tmp_path, plur_entry)
    home = tmp_path / "store"
    tmg.write_config(plur.config(home))
    marker = uuid.uuid4().hex[:8]
    lost, kept = f"The crane{marker} gate opens at six.", f"The stork{marker} gate opens at seven."
    llm.enqueue(Text(lost, delay=3), Text(kept))
    run = spawn(tmg, "when does the gate open?", env=tmg.env(memory=True))
    try:
        llm.wait_requests(1, timeout=60)
        old = broker_pid(tmg)
        os.kill(old, signal.SIGKILL)  # a crash: no goodbye to its clients
        out, err = run.communicate(timeout=90)
    finally:
        run.kill()
    assert (run.returncode, out) == (0, lost + "\n")  # the answer is not lost with the broker
    assert [line for line in err.splitlines() if "memory" in line] == [
        "tmg: memory write failures: 1; plur_learn_batch failing — learning is disabled"], err
    r = tmg.run("-r", "--debug", "and the other gate?", env=tmg.env(memory=True), timeout=90)
    assert r.code == 0 and r.out == kept + "\n", r.err
    assert "via cold start (broker started)" in r.err
    assert broker_pid(tmg) != old
    with plur.reader(home) as reader:
        assert kept in recalled(reader, f"stork{marker} gate")


def test_under_load_every_one_shot_carries_the_recall(tmg, llm, tmp_path, plur_entry):
    """With two CPU burners on a two-core machine, each one-shot still recalls (default recall wait)."""
    plur = Plur(tmp_path, plur_entry)
    home = tmp_path / "store"
    marker = uuid.uuid4().hex[:8]
    seeded = f"Never deploy the gannet{marker} service on Fridays"
    with plur.reader(home) as writer:  # the user's memory, learned earlier
        outcome = writer.call("plur_learn", {"statement": seeded})
        assert not outcome.is_error, outcome.text
    tmg.write_config(plur.config(home, learn="off"))
    env = tmg.env(memory=True)
    del env["TMG_RECALL_WAIT"]  # the budget a user gets
    llm.enqueue(*[Text("Not on Fridays.")] * 6)
    first = tmg.run("-r", f"can I deploy gannet{marker} today?", env=env, timeout=90)  # starts the broker
    assert first.code == 0, first.err
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for _ in range(5):
            r = tmg.run("-r", f"can I deploy gannet{marker} today?", env=env, timeout=90)
            assert r.code == 0, r.err
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    carried = [any(seeded in block for block in memory_blocks(req)) for req in llm.requests[1:]]
    assert carried == [True] * 5


def test_a_server_that_died_is_started_again_by_the_next_run(tmg, llm, tmp_path):
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config())
    llm.enqueue(Text("One."), Text("Two."))
    assert tmg.run("-r", "one?", env=tmg.env(memory=True)).code == 0
    server = int(status(tmg).split("server plur: up, pid ")[1].split(",")[0])
    os.kill(server, signal.SIGKILL)
    assert wait_gone(server)
    r = tmg.run("-r", "--debug", "two?", env=tmg.env(memory=True))
    assert r.code == 0 and "via warm broker" in r.err and "memory write" not in r.err, r.err
    out = status(tmg)
    assert "started 2 time(s)" in out and f"pid {server}," not in out.split("server plur:")[1]
    assert "Two." in plur.statements()


def test_an_idle_broker_exits_by_itself(tmg, llm, tmp_path):
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config())
    llm.enqueue(Text("One."))
    assert tmg.run("-r", "one?", env=tmg.env(memory=True, TMG_BROKER_IDLE="1")).code == 0
    log = tmg.home / "broker.log"
    assert eventually(lambda: "idle for 1s: exiting" in log.read_text(), 60), log.read_text()
    text = log.read_text()  # what it started, and that it went: the broker, then its server
    broker = int(text.split("INFO broker ")[1].split()[0])
    server = int(text.split("server plur started (pid ")[1].split(",")[0])
    assert wait_gone(broker) and wait_gone(server)
    assert not (tmg.home / "run" / "broker.sock").exists()
    assert status(tmg).startswith("broker: not running")


def test_the_broker_and_its_server_never_get_the_provider_keys(tmg, llm, tmp_path):
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config())
    llm.enqueue(Text("One."))
    canary = "sk-canary-provider-key-9d1e"
    env = tmg.env(memory=True, OPENAI_API_KEY=canary, ANTHROPIC_API_KEY=canary)
    assert tmg.run("-r", "one?", env=env).code == 0
    server = int(status(tmg).split("server plur: up, pid ")[1].split(",")[0])
    for pid in (broker_pid(tmg), server):
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert canary.encode() not in environ and b"MOCK_API_KEY" not in environ
    assert canary not in (tmg.home / "broker.log").read_text()


def test_a_memory_server_that_cannot_start_is_one_warning_and_the_answer(tmg, llm):
    tmg.write_config("MCP_SERVERS:\n  plur:\n    COMMAND: no-such-plur-binary\n")
    llm.enqueue(Text("Still here."))
    r = tmg.run("-r", "hello?", env=tmg.env(memory=True))
    assert (r.code, r.out) == (0, "Still here.\n")
    assert r.err.splitlines() == [
        "tmg: warning: memory server 'plur' did not start (cannot start 'no-such-plur-binary': [Errno 2] "
        "No such file or directory: 'no-such-plur-binary'); memory is off for this session"]


def test_a_memory_server_without_dir_runs_where_tmg_runs_not_where_the_broker_does(tmg, llm, tmp_path):
    """A relative path in a server's spec means tmg's working folder, through the broker as in a
    direct spawn (the broker itself lives in /)."""
    plur = FakePlur(tmp_path)
    tmg.write_config(plur.config().replace(json.dumps(str(plur.store)), json.dumps("relative-store.json")))
    llm.enqueue(Text("Kept."))
    r = tmg.run("-r", "--debug", "keep?", env=tmg.env(memory=True))
    assert (r.code, r.out) == (0, "Kept.\n"), r.err
    assert "via cold start (broker started)" in r.err
    assert "Kept." in (tmg.work / "relative-store.json").read_text()
