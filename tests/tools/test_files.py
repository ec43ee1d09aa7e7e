"""The read-only file tools: confined to their roots (symlinks resolved), bounded output."""

from __future__ import annotations

import os

from tmg.tools.files import MAX_READ_BYTES, ListFolderTool, ReadFileTool, RootGuard
from tmg.tools.registry import MAX_RESULT_CHARS, ToolRegistry


async def test_read_file_reads_under_the_root(tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    result = await ReadFileTool(RootGuard([tmp_path])).run({"path": "a.txt"})
    assert result.content == "hello" and not result.is_error


async def test_paths_outside_the_root_are_refused_even_through_a_symlink(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    (outside / "secret.txt").write_text("no")
    os.symlink(outside / "secret.txt", root / "link.txt")
    tool = ReadFileTool(RootGuard([root]))
    for path in ("../outside/secret.txt", "link.txt", str(outside / "secret.txt")):
        result = await tool.run({"path": path})
        assert result.is_error and "outside the allowed folders" in result.content


async def test_a_big_file_is_read_only_up_to_the_cap(tmp_path):
    (tmp_path / "big.log").write_bytes(b"x" * (MAX_READ_BYTES * 3))
    result = await ReadFileTool(RootGuard([tmp_path])).run({"path": "big.log"})
    assert result.content.endswith(f"[truncated at {MAX_READ_BYTES} bytes]")
    assert len(result.content) < MAX_READ_BYTES + 100


async def test_list_folder_marks_folders(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "f.txt").write_text("")
    result = await ListFolderTool(RootGuard([tmp_path])).run({})
    assert result.content.splitlines() == ["f.txt", "sub/"]


async def test_the_registry_bounds_output_and_reports_bad_calls(tmp_path):
    (tmp_path / "big.txt").write_text("y" * (MAX_RESULT_CHARS + 500))
    registry = ToolRegistry([ReadFileTool(RootGuard([tmp_path]))])
    result = await registry.call("read_file", '{"path": "big.txt"}', timeout=5)
    assert "[truncated: 500 more characters not shown]" in result.content
    assert (await registry.call("nope", "{}", timeout=5)).content.startswith("error: there is no tool named 'nope'")
    assert "not a JSON object" in (await registry.call("read_file", "[1]", timeout=5)).content
