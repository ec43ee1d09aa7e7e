"""write_file and edit_file: only inside the roots, only against what the model has read, each
call described with the diff it would make."""

from __future__ import annotations

import os

from tmg.tools.edit import EditFileTool, WriteFileTool
from tmg.tools.files import ReadFileTool, RootGuard
from tmg.tools.ledger import ReadLedger
from tmg.permissions.sensitive import SensitivePaths


def _tools(root):
    guard, ledger = RootGuard([root], SensitivePaths({"HOME": str(root / "no-home")})), ReadLedger()
    return ReadFileTool(guard, ledger), EditFileTool(guard, ledger), WriteFileTool(guard, ledger)


async def test_an_edit_replaces_the_one_occurrence_after_a_read(tmp_path):
    read, edit, _ = _tools(tmp_path)
    (tmp_path / "app.py").write_text("a = 1\nb = 2\nc = 3\n")
    await read.run({"path": "app.py"})
    result = await edit.run({"path": "app.py", "old_string": "b = 2", "new_string": "b = 20\nb2 = 21"})
    assert result.content == "edited app.py (new text at lines 2-3)" and not result.is_error
    assert (tmp_path / "app.py").read_text() == "a = 1\nb = 20\nb2 = 21\nc = 3\n"
    # Its own edit does not make the file stale: a second edit goes through without a new read.
    assert not (await edit.run({"path": "app.py", "old_string": "c = 3", "new_string": "c = 30"})).is_error
    assert (tmp_path / "app.py").read_text() == "a = 1\nb = 20\nb2 = 21\nc = 30\n"


async def test_an_edit_of_a_file_never_read_is_refused(tmp_path):
    _, edit, _ = _tools(tmp_path)
    (tmp_path / "app.py").write_text("x = 1\n")
    result = await edit.run({"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert result.is_error and "has not been read in this session; read it with read_file first" in result.content
    assert (tmp_path / "app.py").read_text() == "x = 1\n"


async def test_an_edit_of_a_file_changed_since_the_read_is_refused(tmp_path):
    read, edit, _ = _tools(tmp_path)
    (tmp_path / "app.py").write_text("x = 1\n")
    await read.run({"path": "app.py"})
    (tmp_path / "app.py").write_text("x = 1\ny = 2\n")  # the user (or a formatter) changed it
    result = await edit.run({"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert result.is_error and "changed since it was last read; read it again" in result.content
    assert (tmp_path / "app.py").read_text() == "x = 1\ny = 2\n"
    # A touch that keeps the content is no change.
    await read.run({"path": "app.py"})
    os.utime(tmp_path / "app.py", (1, 1))
    assert not (await edit.run({"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"})).is_error


async def test_text_not_found_or_not_unique_is_refused_saying_how_many(tmp_path):
    read, edit, _ = _tools(tmp_path)
    (tmp_path / "app.py").write_text("pass\npass\npass\n")
    await read.run({"path": "app.py"})
    missing = await edit.run({"path": "app.py", "old_string": "return", "new_string": "yield"})
    assert missing.is_error and "old_string was not found in app.py" in missing.content
    many = await edit.run({"path": "app.py", "old_string": "pass", "new_string": "return"})
    assert many.is_error and "old_string occurs 3 times in app.py" in many.content
    assert (tmp_path / "app.py").read_text() == "pass\npass\npass\n"


async def test_crlf_files_and_bytes_that_are_not_utf8_survive_an_edit(tmp_path):
    read, edit, _ = _tools(tmp_path)
    (tmp_path / "w.txt").write_bytes(b"caf\xe9\r\nold line\r\nend\r\n")
    await read.run({"path": "w.txt"})
    result = await edit.run({"path": "w.txt", "old_string": "old line\nend", "new_string": "new line\nend"})
    assert not result.is_error, result.content
    assert (tmp_path / "w.txt").read_bytes() == b"caf\xe9\r\nnew line\r\nend\r\n"


async def test_an_edit_describes_itself_with_its_diff(tmp_path):
    read, edit, _ = _tools(tmp_path)
    (tmp_path / "app.py").write_text("a = 1\nb = 2\n")
    action = edit.action({"path": "app.py", "old_string": "b = 2", "new_string": "b = 3"})
    assert (action.tool, action.effect, action.paths) == ("edit_file", "write", (str(tmp_path / "app.py"),))
    assert action.preview.splitlines() == ["--- a/app.py", "+++ b/app.py", "@@ -1,2 +1,2 @@", " a = 1", "-b = 2", "+b = 3"]
    assert edit.action({"path": ".env", "old_string": "a", "new_string": "b"}).sensitive


async def test_write_file_creates_and_replaces_only_what_was_read(tmp_path):
    read, _, write = _tools(tmp_path)
    action = write.action({"path": "new/dir/n.txt", "content": "one\ntwo\n"})
    assert action.effect == "write" and action.preview.splitlines() == [  # the content the user is asked about
        "new file new/dir/n.txt, 2 lines:", "--- a/new/dir/n.txt", "+++ b/new/dir/n.txt", "@@ -0,0 +1,2 @@", "+one", "+two"]
    created = await write.run({"path": "new/dir/n.txt", "content": "one\ntwo\n"})
    assert created.content == "created new/dir/n.txt (2 lines)" and (tmp_path / "new/dir/n.txt").read_text() == "one\ntwo\n"

    (tmp_path / "s.sh").write_text("echo old\n")
    os.chmod(tmp_path / "s.sh", 0o750)
    refused = await write.run({"path": "s.sh", "content": "echo new\n"})
    assert refused.is_error and "read it with read_file first" in refused.content
    await read.run({"path": "s.sh"})
    assert write.action({"path": "s.sh", "content": "echo new\n"}).preview.splitlines()[-2:] == ["-echo old", "+echo new"]
    replaced = await write.run({"path": "s.sh", "content": "echo new\n"})
    assert replaced.content == "replaced s.sh (1 line)"
    assert (tmp_path / "s.sh").read_text() == "echo new\n" and (tmp_path / "s.sh").stat().st_mode & 0o777 == 0o750
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmg")] == []  # no temporary left


async def test_writes_stay_inside_the_roots(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _, edit, write = _tools(root)
    result = await write.run({"path": "../escape.txt", "content": "x"})
    assert result.is_error and "outside the allowed folders" in result.content
    assert not (tmp_path / "escape.txt").exists()
    (tmp_path / "out.txt").write_text("a")
    assert "outside the allowed folders" in (await edit.run({"path": "../out.txt", "old_string": "a", "new_string": "b"})).content


async def test_binary_files_are_not_edited_as_text(tmp_path):
    read, edit, _ = _tools(tmp_path)
    (tmp_path / "b.dat").write_bytes(b"ab\x00cd")
    await read.run({"path": "b.dat"})
    result = await edit.run({"path": "b.dat", "old_string": "ab", "new_string": "xy"})
    assert result.is_error and "is a binary file" in result.content and (tmp_path / "b.dat").read_bytes() == b"ab\x00cd"
