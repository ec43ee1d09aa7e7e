"""Surface detection: direct tool, the plur_admin gateway, or neither."""

from __future__ import annotations

import pytest

from fakeplur.snapshot import load_snapshot
from tmg.memory.surface import ToolSurface, ToolUnavailable


def test_full_profile_calls_directly() -> None:
    surface = ToolSurface.detect(t["name"] for t in load_snapshot().tools("full"))
    assert surface.route("plur_learn_batch", {"engrams": []}) == ("plur_learn_batch", {"engrams": []})
    assert not surface.has_gateway


def test_lean_profile_goes_through_the_gateway_for_hidden_tools() -> None:
    surface = ToolSurface.detect(t["name"] for t in load_snapshot().tools("lean"))
    payload = {"task": "x", "budget": 5}
    assert surface.route("plur_inject_hybrid", payload) == ("plur_admin", {"action": "plur_inject_hybrid",
                                                                           "args": payload})
    assert surface.route("plur_learn", {"statement": "s"}) == ("plur_learn", {"statement": "s"})
    for hidden in ("plur_capture", "plur_learn_batch", "plur_timeline"):
        assert surface.route(hidden, {})[0] == "plur_admin"


def test_neither_tool_nor_gateway_is_unavailable() -> None:
    surface = ToolSurface.detect({"plur_learn", "plur_recall"})
    assert not surface.can_call("plur_capture")
    with pytest.raises(ToolUnavailable):
        surface.route("plur_capture", {"summary": "x"})


def test_memory_and_connection_modules_do_not_import_mcp() -> None:
    """tmg's fast paths must never pay for `import mcp`: it happens only when a server starts."""
    import subprocess
    import sys

    code = ("import sys, tmg.memory.client, tmg.memory.results, tmg.memory.payloads, tmg.memory.surface, "
            "tmg.mcp.connection, tmg.mcp.stdio; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
