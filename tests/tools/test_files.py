"""read_file and list_folder: confined to their roots (symlinks resolved), line ranges, bounded output."""

from __future__ import annotations

import os

from tmg.tools.files import OUTPUT_BUDGET, ListFolderTool, ReadFileTool, RootGuard
from tmg.tools.registry import MAX_RESULT_CHARS, Tool, ToolRegistry
from tmg.permissions.sensitive import SensitivePaths
from tests.support.gates import ALLOW


async def test_read_file_numbers_the_lines_of_a_file_under_the_root(tmp_path):
    (tmp_path / "a.txt").write_text("hello\nworld\n")
    result = await ReadFileTool(RootGuard([tmp_path])).run({"path": "a.txt"})
    assert result.content == "     1\thello\n     2\tworld" and not result.is_error


async def test_paths_outside_the_root_are_refused_even_through_a_symlink(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    (outside / "secret.txt").write_text("no")
    os.symlink(outside / "secret.txt", root / "link.txt")
    tool = ReadFileTool(RootGuard([root]))
    for path in ("../outside/secret.txt", "link.txt", str(outside / "secret.txt")):
        result = await tool.run({"path": path})
        assert result.is_error and "outside the allowed folders" in result.content


async def test_a_line_range_is_read_and_the_rest_is_named(tmp_path):
    (tmp_path / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    result = await ReadFileTool(RootGuard([tmp_path])).run({"path": "n.txt", "offset": 10, "limit": 3})
    assert result.content.splitlines() == ["    10\tline 10", "    11\tline 11", "    12\tline 12",
                                           "[lines 10-12 of 100; read more with offset=13]"]
    tail = await ReadFileTool(RootGuard([tmp_path])).run({"path": "n.txt", "offset": 99})
    assert tail.content.splitlines()[-1] == "[lines 99-100 of 100]"
    past = await ReadFileTool(RootGuard([tmp_path])).run({"path": "n.txt", "offset": 500})
    assert past.is_error and "offset 500 is past the end (n.txt has 100 lines)" in past.content


async def test_a_big_file_stops_at_the_line_limit_or_the_budget_with_a_note(tmp_path):
    (tmp_path / "many.txt").write_text("x\n" * 50)
    result = await ReadFileTool(RootGuard([tmp_path])).run({"path": "many.txt", "limit": 20})
    assert result.content.endswith("\n    20\tx\n[lines 1-20 of 50; read more with offset=21]")
    (tmp_path / "wide.txt").write_text(("y" * 1000 + "\n") * 200)
    wide = await ReadFileTool(RootGuard([tmp_path])).run({"path": "wide.txt"})
    assert len(wide.content) <= OUTPUT_BUDGET + 100
    assert "of 200; read more with offset=" in wide.content.splitlines()[-1]


async def test_a_huge_line_is_cut_not_dumped(tmp_path):
    (tmp_path / "min.js").write_text("z" * 5_000_000)
    result = await ReadFileTool(RootGuard([tmp_path])).run({"path": "min.js"})
    assert result.content.endswith(" [line cut]") and len(result.content) < 3000


async def test_binary_content_is_summarised_never_dumped(tmp_path):
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    (tmp_path / "blob.dat").write_bytes(b"abc\x00def" * 10)
    png = await ReadFileTool(RootGuard([tmp_path])).run({"path": "pic.png"})
    assert png.content == "pic.png: binary file (PNG image, 10,248 bytes); not shown as text"
    blob = await ReadFileTool(RootGuard([tmp_path])).run({"path": "blob.dat"})
    assert blob.content == "blob.dat: binary file (binary data, 70 bytes); not shown as text"


async def test_a_folder_or_an_empty_file(tmp_path):
    (tmp_path / "empty").write_text("")
    (tmp_path / "sub").mkdir()
    tool = ReadFileTool(RootGuard([tmp_path]))
    assert (await tool.run({"path": "empty"})).content == "(empty file)"
    assert (await tool.run({"path": "sub"})).content == "error: sub is a folder; use list_folder"


def test_a_read_describes_its_resolved_path_and_whether_it_holds_secrets(tmp_path):
    (tmp_path / ".env").write_text("KEY=1")
    (tmp_path / "notes.txt").write_text("x")
    os.symlink(tmp_path / ".env", tmp_path / "harmless.txt")
    tool = ReadFileTool(RootGuard([tmp_path], SensitivePaths({"HOME": str(tmp_path / "home")})))
    plain = tool.action({"path": "notes.txt"})
    assert (plain.tool, plain.effect, plain.paths, plain.sensitive) == ("read_file", "read", (str(tmp_path / "notes.txt"),), None)
    assert tool.action({"path": ".env"}).sensitive
    linked = tool.action({"path": "harmless.txt"})
    assert linked.paths == (str(tmp_path / ".env"),) and linked.sensitive


async def test_list_folder_marks_folders(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "f.txt").write_text("")
    result = await ListFolderTool(RootGuard([tmp_path])).run({})
    assert result.content.splitlines() == ["f.txt", "sub/"]


async def test_the_registry_bounds_output_and_reports_bad_calls(tmp_path):
    registry = ToolRegistry([BigTool()], gate=ALLOW)
    result = await registry.call("big", "{}", timeout=5)
    assert "[truncated: 500 more characters not shown]" in result.content
    assert (await registry.call("nope", "{}", timeout=5)).content.startswith("error: there is no tool named 'nope'")
    assert "not a JSON object" in (await registry.call("big", "[1]", timeout=5)).content


class BigTool(Tool):
    name, description, parameters = "big", "too much", {"type": "object"}

    async def run(self, arguments):
        from tmg.tools.registry import ToolResult

        return ToolResult("y" * (MAX_RESULT_CHARS + 500))


async def test_a_path_no_file_can_have_is_an_error_to_the_model_in_every_file_tool(tmp_path):
    """A NUL byte (or text no file name can hold) is the model's mistake to correct, not a crash."""
    import json

    from tmg.session.toolbox import build_tools
    from tmg.environment import Environment
    registry = build_tools(Environment(cwd=tmp_path), gate=ALLOW)
    calls = [("read_file", {"path": "a\0b"}), ("list_folder", {"path": "x\0"}), ("glob", {"pattern": "*", "path": "\0"}),
             ("grep", {"pattern": "x", "path": "a\0"}), ("write_file", {"path": "n\0.txt", "content": "x"}),
             ("edit_file", {"path": "n\0", "old_string": "a", "new_string": "b"})]
    for tool, arguments in calls:
        result = await registry.call(tool, json.dumps(arguments), 5)
        assert result.is_error and "is not a valid path: it contains a NUL byte" in result.content, (tool, result)
    odd = await registry.call("read_file", json.dumps({"path": "\ud800"}), 5)
    assert odd.is_error and "holds characters no file name can" in odd.content
    assert list(tmp_path.iterdir()) == []  # nothing was written
    guarded = await ReadFileTool(RootGuard([tmp_path])).run({"path": "a\0b"})  # run without its description
    assert guarded.is_error and "NUL byte" in guarded.content
