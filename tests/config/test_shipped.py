"""The shipped config: memory on, served by the pinned PLUR install when the config names no server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tmg.config.loader import load_config
from tmg.config.reload import merge_fixed
from tmg.config.shipped import HOW_TO_GET_IT, NEUTRAL_DIR

ENTRY = Path("node_modules/@plur-ai/mcp/dist/index.js")


@pytest.fixture
def machine(tmp_path):
    """A PATH with a `node` on it and an install folder, both empty until a test fills them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    plur_dir = tmp_path / "plur"
    env = {"PATH": str(bin_dir), "TMG_PLUR_DIR": str(plur_dir)}

    class Machine:
        def node(self) -> None:
            exe = bin_dir / "node"
            exe.write_text("#!/bin/sh\n")
            exe.chmod(0o755)

        def install(self) -> Path:
            entry = plur_dir / ENTRY
            entry.parent.mkdir(parents=True)
            entry.write_text("// plur")
            return entry

    return Machine(), env


def load(tmp_path, text: str, env):
    path = tmp_path / "tmg.yaml"
    path.write_text(text)
    return load_config(str(path), env, tmp_path)


def test_no_memory_keys_and_an_install_mean_memory_on_with_the_pinned_plur(tmp_path, machine):
    m, env = machine
    m.node()
    entry = m.install()
    config, warnings = load(tmp_path, "MODE: a\n", env)
    assert warnings == []
    assert config.memory.enabled is True and config.memory.server == "plur"
    plur = config.mcp_servers["plur"]
    assert plur.command == os.path.join(env["PATH"], "node") and plur.args == (str(entry),)
    assert plur.env == {"PLUR_DISABLE_EMBEDDINGS": "1"} and plur.dir == NEUTRAL_DIR
    assert config.origin("MCP_SERVERS.plur.COMMAND") == "default"


def test_an_own_plur_entry_wins_over_the_shipped_one(tmp_path, machine):
    m, env = machine
    m.node()
    m.install()
    config, _ = load(tmp_path, "MCP_SERVERS:\n  plur:\n    COMMAND: my-plur\n", env)
    assert config.mcp_servers["plur"].command == "my-plur" and config.memory.enabled


def test_other_servers_keep_the_shipped_plur_for_memory(tmp_path, machine):
    m, env = machine
    m.node()
    m.install()
    config, _ = load(tmp_path, "MCP_SERVERS:\n  files:\n    COMMAND: fs-server\nMEMORY:\n  LEARN: full\n", env)
    assert set(config.mcp_servers) == {"files", "plur"} and config.memory.enabled and config.memory.learn == "full"


def test_without_node_memory_is_off_with_one_line_saying_how_to_get_it(tmp_path, machine):
    m, env = machine
    m.install()  # installed once, but node has gone since
    config, warnings = load(tmp_path, "MODE: a\n", env)
    assert config.memory.enabled is False and "plur" not in config.mcp_servers
    assert warnings == [HOW_TO_GET_IT]
    assert "./scripts/install-plur" in HOW_TO_GET_IT and "npm" in HOW_TO_GET_IT


def test_not_installed_is_said_once_and_only_when_memory_is_wanted(tmp_path, machine):
    m, env = machine
    m.node()
    _, warnings = load(tmp_path, "MODE: a\n", env)
    assert warnings == [HOW_TO_GET_IT]
    _, warnings = load(tmp_path, "MEMORY:\n  ENABLED: false\n", env)
    assert warnings == []
    _, warnings = load(tmp_path, "MODE: a\n", {**env, "TMG_MEMORY_ENABLED": "false"})
    assert warnings == []


def test_memory_on_a_named_server_that_is_missing_keeps_the_usual_warning(tmp_path, machine):
    m, env = machine
    m.node()
    m.install()
    config, warnings = load(tmp_path, "MEMORY:\n  SERVER: elsewhere\n", env)
    assert config.memory.enabled is False and "plur" not in config.mcp_servers
    assert len(warnings) == 1 and 'MEMORY.SERVER "elsewhere" is not a key of MCP_SERVERS' in warnings[0]


def test_a_reload_sees_the_same_shipped_entry_so_nothing_waits_for_a_restart(tmp_path, machine):
    m, env = machine
    m.node()
    m.install()
    first, _ = load(tmp_path, "MEMORY:\n  LEARN: off\n", env)
    second, _ = load(tmp_path, "MEMORY:\n  LEARN: batch\n", env)
    merged, restart = merge_fixed(first, second)
    assert restart == [] and merged.memory.learn == "batch" and merged.memory.enabled


def test_the_example_config_loads_with_memory_on_through_the_shipped_plur(tmp_path, machine):
    m, env = machine
    m.node()
    m.install()
    example = Path(__file__).resolve().parents[2] / "config" / "tmg.example.yaml"
    config, warnings = load_config(str(example), env, tmp_path)
    assert warnings == [] and config.memory.enabled and config.mcp_servers["plur"].dir == NEUTRAL_DIR
