"""`@path` attachments: the grammar (what names a file, what is text, escapes, MCP resources), the
judgement (the permission engine, as the user's own read), and the bounds."""

from __future__ import annotations

import asyncio

import pytest

from tmg.llm.gateway import ProviderSpec
from tmg.permissions.action import PermissionGate, ToolAction, Verdict
from tmg.tools import attach
from tmg.tools.attach import FileAttacher
from tmg.permissions.sensitive import SensitivePaths


class Gate(PermissionGate):
    def __init__(self, refuse: set[str] = frozenset()) -> None:
        self.asked: list[ToolAction] = []
        self._refuse = refuse

    async def check(self, action: ToolAction) -> Verdict:
        self.asked.append(action)
        if any(action.paths[0].endswith(name) for name in self._refuse):
            return Verdict(False, "denied by rule read_file(secret)")
        return Verdict(True, "allowed")


@pytest.fixture
def work(tmp_path):
    folder = tmp_path / "work"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("print('hi')\n")
    (folder / "my notes.txt").write_text("spaced\n")
    return folder


def attacher(work, gate=None, images=True, said=None):
    said = [] if said is None else said
    return FileAttacher(work, gate or Gate(), SensitivePaths({"HOME": str(work.parent / "home")}), said.append,
                        lambda: ProviderSpec("p", "openai/m", images=images))


def test_what_names_a_file(work):
    said: list[str] = []
    files = attacher(work, said=said)
    text, refs = files.find('see @src/app.py, @"my notes.txt" and a@b.c, @someone, (@src/app.py) @docs:x://y', ["docs"])
    assert text == 'see @src/app.py, @"my notes.txt" and a@b.c, @someone, (@src/app.py) @docs:x://y'
    assert [(r.typed, r.path.name) for r in refs] == [("src/app.py", "app.py"), ("my notes.txt", "my notes.txt")]
    assert said == []
    text, refs = files.find("mail @@src/app.py, keep @@docs:x://y for resource_refs", ["docs"])
    assert text == "mail @src/app.py, keep @@docs:x://y for resource_refs" and refs == []
    files.find("fix @src/mian.py and @nobody", [])
    assert said == [f"@src/mian.py names no file or folder here ({work}); it is sent as typed"]


def test_files_are_judged_as_the_users_read_and_a_refused_one_is_left_out(work):
    (work / ".env").write_text("TOKEN=x\n")
    outside = work.parent / "outside.txt"
    outside.write_text("from outside\n")
    gate = Gate(refuse={".env"})
    said: list[str] = []
    _text, attached = asyncio.run(attacher(work, gate, said=said).attach(f"@.env @{outside}"))
    assert [(a.tool, a.effect) for a in gate.asked] == [("read_file", "read")] * 2
    assert gate.asked[0].sensitive and "hold secrets" in gate.asked[0].sensitive  # a secret file: the engine asks
    assert gate.asked[1].sensitive is None and gate.asked[1].refusal is None  # outside the folder: the user named it
    assert attached.blocks[0] == "--- file @.env was not attached (denied by rule read_file(secret)) ---"
    assert "from outside" in attached.blocks[1]
    assert said == ["@.env was not attached (denied by rule read_file(secret)); the prompt is sent without it"]


def test_text_is_bounded_per_file_and_per_prompt(work, monkeypatch):
    monkeypatch.setattr(attach, "MAX_FILE_CHARS", 100)
    monkeypatch.setattr(attach, "MAX_TOTAL_CHARS", 150)
    for name in ("a.txt", "b.txt"):
        (work / name).write_text("x" * 99 + "\n" + "y" * 500)
    said: list[str] = []
    _text, attached = asyncio.run(attacher(work, said=said).attach("@a.txt @b.txt"))
    first, second = attached.blocks
    assert "[cut: the first 100 characters (2 lines) of 600 bytes are attached" in first and "y" * 2 not in first
    assert "[cut: the first 50 characters" in second  # what the prompt's bound left
    assert said[0].startswith("@a.txt: attached the first 100 characters of 600 bytes")


def test_a_folder_a_binary_and_images(work):
    (work / "blob.bin").write_bytes(b"\x00\x01" * 100)
    (work / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 50)
    _text, attached = asyncio.run(attacher(work).attach("@src @blob.bin @pic.png"))
    folder, binary, image = attached.blocks
    assert "\napp.py\n" in folder
    assert "[application/octet-stream, 200 bytes: not attached as text]" in binary
    assert "[image: image/png, " in image and "(attached as an image)" in image
    assert [i.mime for i in attached.images] == ["image/png"]
    said: list[str] = []
    _text, attached = asyncio.run(attacher(work, images=False, said=said).attach("@pic.png and @pic.png"))
    assert attached.images == [] and "only this note is sent" in attached.blocks[0] and len(attached.blocks) == 1
    assert said == ["model openai/m does not take images (PROVIDERS.p.IMAGES: true says it does); @pic.png is sent "
                    "as a note only"]


def test_at_most_so_many_files(work, monkeypatch):
    monkeypatch.setattr(attach, "MAX_FILES", 1)
    said: list[str] = []
    _text, attached = asyncio.run(attacher(work, said=said).attach('@src/app.py @"my notes.txt"'))
    assert len(attached.blocks) == 1 and said == ["the prompt names 2 files; only the first 1 are attached"]


def test_only_the_typed_part_names_files(work):
    files = attacher(work)
    typed = "look at @src/app.py"
    text = typed + "\n\npiped: @@x and @my notes.txt @src/app.py"
    sent, attached = asyncio.run(files.attach(text, (), typed))
    assert sent == text and len(attached.blocks) == 1  # the piped @@ stays as it came, nothing attached from it
    _sent, attached = asyncio.run(files.attach("something else @src/app.py", (), "not a prefix"))
    assert attached.blocks == []
