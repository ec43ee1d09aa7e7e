"""The shipped config end to end: with no MEMORY or MCP_SERVERS in the config, memory is on and
served by the pinned PLUR install; without Node.js it is off, with one line saying how to get it.

The install here is a stand-in: a `node` on PATH that records how it was started and then runs
fakeplur, and an install folder (TMG_PLUR_DIR) holding the entry file. The live legs
(`test_memory_live.py`) run the same default path against the real server.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from e2e.conftest import API_KEY
from e2e.mock_llm import Text
from e2e.plur import REPO, FakePlur, memory_blocks
from tmg.config.shipped import HOW_TO_GET_IT

SEED = "Never water the office cactus more than once a month"
PROVIDER_CANARY = "sk-openai-canary-41d0"


def stand_in_install(root: Path, plur: FakePlur) -> tuple[Path, Path, dict[str, Path]]:
    """A bin folder with a `node` that records its start and becomes fakeplur; the install folder."""
    bin_dir, install = root / "bin", root / "plur-install"
    entry = install / "node_modules" / "@plur-ai" / "mcp" / "dist" / "index.js"
    entry.parent.mkdir(parents=True)
    entry.write_text("// stand-in\n")
    bin_dir.mkdir()
    seen = {"argv": root / "node-argv", "cwd": root / "node-cwd", "env": root / "node-env"}
    plur.seed_file.write_text(f'["{SEED}"]')
    node = bin_dir / "node"
    node.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\n' \"$@\" > '{seen['argv']}'\n"
        f"pwd > '{seen['cwd']}'\n"
        f"env > '{seen['env']}'\n"
        f"PYTHONPATH='{REPO}' FAKE_PLUR_STORE='{plur.store}' FAKE_PLUR_SEED='{plur.seed_file}' "
        f"exec '{sys.executable}' -m fakeplur\n"
    )
    node.chmod(0o755)
    return bin_dir, install, seen


def test_the_shipped_config_starts_the_pinned_plur_with_none_of_the_users_keys(tmg, llm, tmp_path):
    plur = FakePlur(tmp_path)
    bin_dir, install, seen = stand_in_install(tmp_path, plur)
    llm.enqueue(Text("Once a month at most."))
    env = tmg.env(memory=True, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", TMG_PLUR_DIR=str(install),
                  OPENAI_API_KEY=PROVIDER_CANARY)
    r = tmg.run("-r", "how often should the office cactus get water?", env=env)
    assert r.code == 0 and r.out == "Once a month at most.\n", r.err
    assert r.err == ""
    entry = install / "node_modules" / "@plur-ai" / "mcp" / "dist" / "index.js"
    assert seen["argv"].read_text().splitlines() == [str(entry)]
    assert seen["cwd"].read_text().strip() == "/"
    server_env = seen["env"].read_text()
    assert "PLUR_DISABLE_EMBEDDINGS=1" in server_env.splitlines()
    assert PROVIDER_CANARY not in server_env and API_KEY not in server_env and "TMG_" not in server_env
    assert SEED in memory_blocks(llm.requests[0])[0]
    # LEARN full by default: a question taught nothing, and the answer is written nowhere in memory.
    assert plur.episodes() == [] and "Once a month at most." not in plur.statements()
    assert plur.calls("plur_capture") == [] and plur.calls("plur_learn") == []


def test_without_node_memory_is_off_with_one_line_saying_how_to_get_it(tmg, llm, tmp_path):
    empty = tmp_path / "no-node-here"
    empty.mkdir()
    llm.enqueue(Text("Fine without memory."))
    r = tmg.run("-r", "hello", env=tmg.env(memory=True, PATH=str(empty)))
    assert r.code == 0 and r.out == "Fine without memory.\n"
    assert r.err.splitlines() == [f"tmg: warning: {HOW_TO_GET_IT}"]
    assert memory_blocks(llm.requests[0]) == []
