"""What tmg remembers of each server's tool list across runs (tmg.mcp.known_tools)."""

from __future__ import annotations

from tmg.mcp import ServerSpec
from tmg.mcp.known_tools import KnownTools
from tmg.mcp.outcome import ToolSpec

SPEC = ServerSpec("notes", command="notes-server", env={"TOKEN": "tok-secret-value-123"})
TOOLS = {"read": ToolSpec("read", {"type": "object"}, "Read a note.", {"readOnlyHint": True})}


def test_a_listing_is_remembered_per_spec_and_written_only_when_it_changes(tmp_path):
    KnownTools(tmp_path).record(SPEC, TOOLS, "Use read first.")
    assert KnownTools(tmp_path).tools(SPEC) == (TOOLS, "Use read first.")
    assert KnownTools(tmp_path).tools(ServerSpec("notes", command="notes-server")) is None  # another ENV: another server
    written = (tmp_path / "mcp-tools.json").stat().st_mtime_ns
    KnownTools(tmp_path).record(SPEC, TOOLS, "Use read first.")
    assert (tmp_path / "mcp-tools.json").stat().st_mtime_ns == written
    assert "tok-secret-value-123" not in (tmp_path / "mcp-tools.json").read_text()


def test_a_damaged_file_knows_nothing(tmp_path):
    (tmp_path / "mcp-tools.json").write_text("{not json")
    assert KnownTools(tmp_path).tools(SPEC) is None
    KnownTools(tmp_path).record(SPEC, TOOLS, "")
    assert KnownTools(tmp_path).tools(SPEC) == (TOOLS, "")
