"""Instruction files: which are read, in what order, bounded, re-read only on change, and how
they reach the system message (tmg.context.instruction_files, tmg.context.instructions)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tmg.compose import build_pipeline
from tmg.config.model import Config
from tmg.context.instruction_files import InstructionFiles
from tmg.context.instructions import InstructionsTransformer
from tmg.context.pipeline import TurnContext


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    return root, env


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def loaded(env, cwd, **kw):
    files = InstructionFiles(env, cwd, **kw)
    files.refresh()
    return files.current


def test_user_file_first_then_root_down_to_the_working_folder_nearest_last(repo):
    root, env = repo
    write(Path(env["XDG_CONFIG_HOME"]) / "tmg" / "AGENTS.md", "mine")
    write(root / "AGENTS.md", "root rules")
    write(root / "pkg" / "CLAUDE.md", "pkg rules")  # no AGENTS.md there: the fallback
    write(root / "pkg" / "sub" / "AGENTS.md", "sub rules")
    write(root / "pkg" / "sub" / "GEMINI.md", "never: AGENTS.md is there")
    write(root.parent / "AGENTS.md", "outside the repository")
    current = loaded(env, root / "pkg" / "sub")
    assert [f.shown for f in current.files] == [str(Path(env["XDG_CONFIG_HOME"]) / "tmg" / "AGENTS.md"),
                                                 "AGENTS.md", "pkg/CLAUDE.md", "pkg/sub/AGENTS.md"]
    section = current.section()
    assert section.index("mine") < section.index("root rules") < section.index("pkg rules") < section.index("sub rules")
    assert "never" not in section and "outside the repository" not in section
    assert "not by the user" in section and "grant no permissions" in section


def test_gemini_md_is_the_last_fallback_and_without_git_only_the_working_folder(tmp_path):
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    write(tmp_path / "AGENTS.md", "parent, not a repository root")
    write(tmp_path / "work" / "GEMINI.md", "gemini rules")
    current = loaded(env, tmp_path / "work")
    assert [f.shown for f in current.files] == ["GEMINI.md"]
    assert current.root == tmp_path / "work"


def test_bounded_nearest_kept_whole_and_the_cut_said(repo):
    root, env = repo
    write(root / "AGENTS.md", "root line\n" * 400)  # 4,000 bytes
    write(root / "pkg" / "AGENTS.md", "near line\n" * 100)  # 1,000 bytes
    current = loaded(env, root / "pkg", budget=2000)
    near = current.files[1]
    far = current.files[0]
    assert not near.cut and near.text.count("near line") == 100
    assert far.cut and far.sent == 1000 and far.text.endswith("\n")  # cut at a line's end
    notices = current.notices()
    assert len(notices) == 1 and "AGENTS.md is cut to its first 1,000 of 4,000 bytes" in notices[0]
    assert "is not loaded" in current.section()


def test_a_symlink_out_of_the_repository_is_not_read_and_said(repo, tmp_path):
    root, env = repo
    secret = write(tmp_path / "secret.txt", "TOKEN=abc")
    root.mkdir(exist_ok=True)
    os.symlink(secret, root / "AGENTS.md")
    current = loaded(env, root)
    assert current.files == () and "TOKEN" not in current.section()
    assert "leads outside the repository" in current.notices()[0]


def test_a_fifo_or_binary_file_is_skipped_without_blocking(repo):
    root, env = repo
    os.mkfifo(root / "AGENTS.md")
    write(root / "pkg" / "AGENTS.md", "a\0b")
    current = loaded(env, root / "pkg")
    reasons = [s.reason for s in current.skipped]
    assert reasons == ["it is not a regular file", "it is binary (it contains NUL bytes)"]


def test_refresh_rereads_only_on_change(repo):
    root, env = repo
    path = write(root / "AGENTS.md", "v1")
    files = InstructionFiles(env, root)
    assert files.refresh() is True
    first = files.current
    assert files.refresh() is False and files.current is first  # nothing changed: the same object
    write(path, "version two")
    assert files.refresh() is True and "version two" in files.current.section()
    path.unlink()
    assert files.refresh() is True and files.current.section() == ""


def test_listing_names_each_file_with_its_path(repo):
    root, env = repo
    write(root / "AGENTS.md", "x")
    lines = loaded(env, root).listing()
    assert lines[0].startswith("instruction files")
    assert lines[1] == f"  {root / 'AGENTS.md'} (the repository's, 1 bytes)"
    (root / "empty").mkdir()
    (root / "AGENTS.md").unlink()
    assert loaded(env, root / "empty").listing()[0].startswith("instruction files: none")


async def test_in_the_system_message_after_the_persona_byte_identical_between_prompts(repo):
    root, env = repo
    write(root / "AGENTS.md", "Use tabs.")
    transformer = InstructionsTransformer(InstructionFiles(env, root))
    pipeline = build_pipeline(instructions=transformer)
    sent = []
    for prompt_id in (1, 2):
        ctx = TurnContext([{"role": "user", "content": f"q{prompt_id}"}], Config(), prompt_id, 1)
        sent.append((await pipeline.run(ctx)).payload[0])
    assert sent[0] == sent[1]
    assert sent[0]["role"] == "system" and sent[0]["content"].index("You are tmg") < sent[0]["content"].index("Use tabs.")
    assert "9:instructions" in pipeline.names()


async def test_a_cut_is_said_once_not_at_every_prompt(repo):
    root, env = repo
    write(root / "AGENTS.md", "x" * 100)
    transformer = InstructionsTransformer(InstructionFiles(env, root, budget=10))
    said = []
    for prompt_id in (1, 2, 3):
        ctx = TurnContext([{"role": "user", "content": "q"}], Config(), prompt_id, 1)
        await transformer.apply(ctx)
        said += ctx.notices
    assert len(said) == 1 and "cut" in said[0]
