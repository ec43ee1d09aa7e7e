"""Where the broker lives: a private folder per tmg home, a socket path the kernel accepts."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tmg.mcp.errlog import rotate
from tmg.broker.paths import broker_enabled, fingerprint, idle_seconds, private_dir, socket_path
from tmg.paths import runtime_dir


def test_the_runtime_folder_is_the_tmg_homes_or_the_users_runtime_dir(tmp_path):
    assert runtime_dir({"TMG_HOME": str(tmp_path), "XDG_RUNTIME_DIR": "/run/user/7"}) == tmp_path / "run"
    assert runtime_dir({"XDG_RUNTIME_DIR": "/run/user/7"}) == Path("/run/user/7/tmg")


def test_a_socket_path_too_long_for_the_kernel_moves_to_a_short_private_folder(tmp_path):
    deep = tmp_path / ("x" * 120)
    path = socket_path(deep)
    assert len(os.fsencode(path)) < 108 and path.parent.name.startswith(f"tmg-{os.getuid()}-")
    assert socket_path(deep) == path  # the same folder always gets the same socket
    assert socket_path(Path("/tmp/a")) == Path(f"/tmp/a/broker-{fingerprint()[:12]}.sock")


def test_the_folder_is_made_private(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    private_dir(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


@pytest.mark.parametrize(("value", "on"), [("0", False), ("false", False), ("1", True), ("", True)])
def test_the_broker_can_be_turned_off(value, on):
    assert broker_enabled({"TMG_MEMORY_BROKER": value} if value else {}) is on


def test_idle_period_from_the_environment():
    assert idle_seconds({}) == 900
    assert idle_seconds({"TMG_BROKER_IDLE": "30"}) == 30
    assert idle_seconds({"TMG_BROKER_IDLE": "soon"}) == 900


def test_a_log_past_its_size_keeps_one_previous_generation(tmp_path):
    log = tmp_path / "memory-server.log"
    log.write_bytes(b"x" * 2000)
    rotate(log, limit=1000)
    assert not log.exists() and (tmp_path / "memory-server.log.1").stat().st_size == 2000
    log.write_bytes(b"y" * 10)
    rotate(log, limit=1000)
    assert log.read_bytes() == b"y" * 10


def test_a_client_does_not_use_a_socket_others_can_reach(tmp_path):
    from tmg.broker.client import NotPrivate, ask

    folder = tmp_path / "run"
    folder.mkdir()
    folder.chmod(0o755)
    with pytest.raises(NotPrivate):
        ask(folder / "broker.sock", "tmg/status")


def test_a_symlink_where_the_private_folder_goes_is_refused(tmp_path):
    elsewhere = tmp_path / "planted"
    elsewhere.mkdir(mode=0o700)
    link = tmp_path / "tmg-fallback"
    link.symlink_to(elsewhere)
    with pytest.raises(PermissionError, match="symlink"):
        private_dir(link)


def test_the_fingerprint_covers_every_tmg_module_the_broker_loads():
    import subprocess
    import sys

    import tmg.broker.reinforce  # noqa: F401 - the module naming the script PLUR's reads run through
    from tmg.broker.paths import broker_sources

    # What `python -m tmg.broker` and a client of it load, in a fresh interpreter.
    code = ("import sys, tmg.broker.entry, tmg.broker.daemon, tmg.broker.launch, tmg.broker.control\n"
            "print('\\n'.join(m.__file__ for n, m in sys.modules.items() if n.startswith('tmg')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded and {Path(p).resolve() for p in loaded} <= set(broker_sources())
    assert Path(sys.modules["tmg.broker.reinforce"].__file__).with_name("plur_reader.mjs") in broker_sources()
